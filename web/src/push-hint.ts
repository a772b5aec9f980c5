import { h } from './dom.js'

/**
 * On a plain-HTTP page the browser gives no service worker, no push and no notifications: say in
 * one sentence what the household misses, and where the steps to HTTPS are (https-setup.html,
 * built from docs/phone-app.md, with the household CA certificate the speaker serves).
 */
export function pushHint(): HTMLElement | null {
  if (window.isSecureContext) return null
  return h(
    'p',
    { class: 'hint push-hint', role: 'note' },
    'On this plain-HTTP address this phone gets no approvals on its lock screen: a request reaches it only while the app is open. ',
    h('a', { href: 'https-setup.html' }, 'How to set up HTTPS'),
  )
}
