import { App, type Tab } from './app.js'
import { ApprovalsView } from './approvals-view.js'
import { Attention } from './attention.js'
import { CardLink, parseCardLink } from './card-link.js'
import { ChatsView } from './chats-view.js'
import { h, replace } from './dom.js'
import { GrantsView } from './grants-view.js'
import { healthView } from './health.js'
import { HistoryView } from './history-view.js'
import { pushHint } from './push-hint.js'
import { PushSubscriptions } from './push-subscription.js'
import { type AppConfig, pairWith, renderSpeakers } from './speakers-view.js'
import './style.css'

const TABS: Array<[Tab, string]> = [
  ['approvals', 'Approvals'],
  ['chats', 'Chats'],
  ['history', 'History'],
  ['grants', 'Grants'],
  ['speakers', 'Speakers'],
]

/** The device serves `/config.json` with its broker's WebSocket URL; a missing one is no error. */
async function loadConfig(): Promise<AppConfig> {
  try {
    const r = await fetch('config.json', { cache: 'no-store' })
    return r.ok ? ((await r.json()) as AppConfig) : {}
  } catch {
    return {}
  }
}

async function main(): Promise<void> {
  const app = new App(localStorage)
  const config = await loadConfig()
  const approvals = new ApprovalsView(app)
  const chats = new ChatsView(app)
  const historyView = new HistoryView(app)
  const grants = new GrantsView(app, () => historyView.refresh())
  const view = h('main', { id: 'view', tabindex: -1 })
  const notice = h('div', { id: 'notice', 'aria-live': 'assertive' })
  const health = h('div', { id: 'health', 'aria-live': 'polite' })
  const nav = h('nav', { 'aria-label': 'Screens' })

  const renderNav = () => {
    const n = app.pendingCount()
    replace(
      nav,
      ...TABS.map(([tab, label]) =>
        h(
          'button',
          {
            class: 'tab',
            'data-tab': tab,
            'aria-current': app.tab === tab ? 'page' : undefined,
            onclick: () => app.setTab(tab),
          },
          // The name a screen reader says is the visible text itself ("2 Approvals waiting"), so
          // voice control by the visible word works (axe: label-content-name-mismatch).
          tab === 'approvals' && n > 0 ? h('span', { class: 'count' }, `${n} `) : null,
          label,
          tab === 'approvals' && n > 0 ? h('span', { class: 'vh' }, ' waiting') : null,
        ),
      ),
    )
  }
  const renderNotice = () => {
    const m = app.notice
    replace(
      notice,
      m
        ? h(
            'p',
            { class: m.kind, role: m.kind === 'problem' ? 'alert' : 'status' },
            m.text,
            h(
              'button',
              {
                class: 'close',
                'aria-label': 'Dismiss',
                onclick: () => {
                  app.notice = undefined
                  renderNotice()
                },
              },
              '×',
            ),
          )
        : null,
    )
  }
  const renderHealth = () =>
    replace(
      health,
      healthView([...app.links.values()], () => app.setTab('speakers')),
    )
  const renderView = () => {
    if (app.tab === 'approvals') approvals.render(view)
    else if (app.tab === 'speakers') renderSpeakers(view, app, config)
    else if (app.tab === 'chats') chats.render(view)
    else if (app.tab === 'history') historyView.render(view)
    else grants.render(view)
  }

  const linked = new CardLink(app)
  app.onChange((what) => {
    if (what === 'tick') {
      approvals.tick(view)
      linked.show(view)
      return
    }
    if (what === 'notice') return renderNotice()
    renderNav()
    if (what === 'link' || what === 'status' || what === 'speakers') renderHealth()
    if (what === 'tab') {
      renderView()
      if (app.tab === 'chats') void chats.refresh()
      if (app.tab === 'grants') void grants.refresh()
      if (app.tab === 'history') void historyView.refresh()
      return
    }
    // An ending seen here is in the speaker's history now: read it again.
    if (what === 'cards' && app.tab === 'history') void historyView.refresh()
    // Chats and grants hold a person's typing: they re-render only from their own answers.
    if (app.tab === 'approvals' || app.tab === 'speakers') renderView()
    else if (what === 'speakers' || what === 'link') renderView()
    linked.show(view)
  })

  document.body.append(
    h(
      'header',
      {},
      h('h1', {}, 'Nocturn'),
      notificationsButton(() => push.subscribeAll()),
    ),
    pushHint() ?? '',
    notice,
    health,
    view,
    nav,
  )
  app.start()
  const push = new PushSubscriptions(app)
  push.start()

  // A pairing in the fragment never reached a server; take it, then wipe it from the address bar.
  const takePairing = (): boolean => {
    const hash = location.hash
    if (!hash.startsWith('#pair=')) return false
    history.replaceState(null, '', location.pathname + location.search)
    pairWith(app, hash, config)
    return true
  }
  // An alert's link to a request: open Approvals at its card, then wipe it like a pairing.
  const takeCardLink = (): boolean => {
    const wanted = parseCardLink(location.hash)
    if (!wanted) return false
    history.replaceState(null, '', location.pathname + location.search)
    app.setTab('approvals')
    linked.want(wanted)
    return true
  }
  if (!takePairing() && !takeCardLink() && app.links.size === 0) app.setTab('speakers')
  // A second speaker's link, or another alert's, opened in the same tab changes only the fragment.
  window.addEventListener('hashchange', () => {
    if (takePairing() || takeCardLink()) renderView()
  })
  renderNav()
  renderHealth()
  renderView()
  linked.show(view)

  if ('serviceWorker' in navigator && window.isSecureContext) {
    void navigator.serviceWorker.register('sw.js').catch(() => {})
    // A tap on a notification while the app is open: the worker names the card to show.
    navigator.serviceWorker.addEventListener('message', (e: MessageEvent) => {
      const m = e.data as { type?: unknown; hash?: unknown } | null
      if (m?.type === 'nocturn-open' && typeof m.hash === 'string') location.hash = m.hash
    })
    push.subscribeAll()
  }
  document.body.dataset.ready = 'true'
  performance.mark('nocturn-ready')
}

/** Notifications are blocked: say so and how to undo it, rather than vanish (issue 23, finding 12). */
const NOTIFICATIONS_BLOCKED =
  "Notifications are blocked for this app, so a request shows only while it is open. To get them, allow notifications for this site in your browser's settings."

function notificationsButton(allowed: () => void): HTMLElement | null {
  if (!Attention.notificationsPossible()) return null
  const said = (text: string) => h('p', { class: 'hint notifications', role: 'status' }, text)
  if (Notification.permission === 'denied') return said(NOTIFICATIONS_BLOCKED)
  if (Notification.permission !== 'default') return null
  const b = h(
    'button',
    {
      class: 'secondary small',
      onclick: () => {
        void Notification.requestPermission().then((answer) => {
          // Dismissed without an answer ('default'): the button stays for another try.
          if (answer === 'granted') {
            b.remove()
            allowed()
          } else if (answer === 'denied') b.replaceWith(said(NOTIFICATIONS_BLOCKED))
        })
      },
    },
    'Allow notifications',
  )
  return b
}

void main()
