import type { App } from './app.js'
import { h, replace } from './dom.js'
import { healthOf } from './health.js'
import { parsePairing, type Speaker } from './pairing.js'
import type { SpeakerLink } from './speaker-link.js'

/** Speakers: each paired one with its status and login; pairing a new one; the diagnostics. */
export function renderSpeakers(root: HTMLElement, app: App, config: AppConfig): void {
  replace(
    root,
    h(
      'ul',
      { class: 'speakers', 'aria-label': 'Paired speakers' },
      ...[...app.links.values()].map((l) => speakerView(app, l)),
    ),
    app.links.size === 0 ? h('p', { class: 'empty' }, 'No speaker paired yet.') : null,
    pairForm(app, config),
    diagnostics(app),
  )
}

export interface AppConfig {
  brokerWsUrl?: string
  device?: string
  prefix?: string
}

function statusText(l: SpeakerLink): string {
  if (l.state !== 'connected') return healthOf(l).text
  const s = l.status
  if (!s) return 'Connected; no status from the speaker yet'
  if (!s.online) return 'Offline'
  return `Online · ${s.state.replace(/_/g, ' ')}`
}

function speakerView(app: App, l: SpeakerLink): HTMLElement {
  const s = l.speaker
  const online = l.state === 'connected' && l.status?.online === true
  const pw = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'current-password',
    'aria-label': `Broker password for ${s.username} on ${s.name}`,
  }) as HTMLInputElement
  const user = h('input', {
    type: 'text',
    name: 'username',
    value: s.username,
    autocomplete: 'username',
    'aria-label': `Broker user for ${s.name}`,
  }) as HTMLInputElement
  return h(
    'li',
    { class: `speaker ${online ? 'online' : 'offline'}`, 'data-speaker': s.device },
    h(
      'div',
      { class: 'speaker-head' },
      h('span', { class: 'dot', 'aria-hidden': 'true' }),
      h('h2', {}, s.name),
      l.status?.muted ? h('span', { class: 'badge' }, 'Muted') : null,
    ),
    h('p', { class: 'status', 'data-status': '' }, statusText(l)),
    h('p', { class: 'meta' }, `This phone: ${s.phone} · ${l.pending().length} waiting`),
    l.problem ? h('p', { class: 'problem', role: 'alert' }, l.problem) : null,
    h(
      'details',
      { class: 'login-box', open: l.state === 'refused' || l.state === 'needs-login' },
      h('summary', {}, 'Broker login'),
      h(
        'form',
        {
          class: 'login',
          onsubmit: (e: Event) => {
            e.preventDefault()
            app.notice = undefined
            // How the connection goes is shown in the speaker's health line, not in a notice
            // that would outlive it.
            app.pair({ ...s, username: user.value.trim() || s.phone, password: pw.value })
          },
        },
        h('label', {}, 'Broker user ', user),
        h('label', {}, 'Broker password ', pw),
        h('button', { type: 'submit' }, 'Connect'),
      ),
    ),
    h(
      'button',
      {
        class: 'secondary',
        onclick: () => {
          if (confirm(`Forget ${s.name}? You will need a new pairing link to add it again.`)) {
            app.unpair(l.id)
          }
        },
      },
      `Forget ${s.name}`,
    ),
  )
}

function pairForm(app: App, config: AppConfig): HTMLElement {
  const uri = h('textarea', {
    name: 'pairing',
    rows: 3,
    'aria-label': 'Pairing link',
    placeholder: 'nocturn-pair:v1?…',
  }) as HTMLTextAreaElement
  const pw = h('input', {
    type: 'password',
    name: 'new-password',
    autocomplete: 'new-password',
    'aria-label': 'Broker password for this phone',
  }) as HTMLInputElement
  return h(
    'form',
    {
      class: 'pair',
      onsubmit: (e: Event) => {
        e.preventDefault()
        const r = pairWith(app, uri.value, config, pw.value)
        if (r) uri.value = ''
      },
    },
    h('h2', {}, 'Pair a speaker'),
    h(
      'p',
      { class: 'hint' },
      'On the speaker run nocturn pair <phone> <name>, then scan its QR code or paste the link here.',
    ),
    h('label', {}, 'Pairing link ', uri),
    h('label', {}, 'Broker password ', pw),
    h('button', { type: 'submit' }, 'Pair'),
  )
}

/** Pairs from a link or URI; on a problem says what to fix and changes nothing stored. */
export function pairWith(app: App, text: string, config: AppConfig, password = ''): boolean {
  const r = parsePairing(text)
  if (!r.ok) {
    app.say(r.problem, 'problem')
    app.setTab('speakers')
    return false
  }
  let speaker: Speaker = r.speaker
  if (!speaker.wsUrl && config.brokerWsUrl) speaker = { ...speaker, wsUrl: config.brokerWsUrl }
  const old = app.store.load().find((s) => s.device === speaker.device && s.phone === speaker.phone)
  if (!password && old?.password) speaker = { ...speaker, password: old.password }
  else if (password) speaker = { ...speaker, password }
  app.pair(speaker)
  app.say(
    speaker.password
      ? `Paired with ${speaker.name} as ${speaker.phone}.`
      : `Paired with ${speaker.name} as ${speaker.phone}. Enter this phone's broker password below to connect.`,
  )
  app.setTab('speakers')
  return true
}

function diagnostics(app: App): HTMLElement {
  const rows = [...app.links.values()].flatMap((l) =>
    [...l.refusals.entries()].map(([reason, n]) =>
      h(
        'tr',
        { 'data-reason': reason },
        h('td', {}, l.speaker.name),
        h('td', {}, reason),
        h('td', {}, String(n)),
      ),
    ),
  )
  return h(
    'section',
    { class: 'diagnostics', 'aria-label': 'Diagnostics' },
    h('h2', {}, 'Diagnostics'),
    h('p', { class: 'hint' }, 'Messages this phone refused to believe (never shown), by reason.'),
    rows.length === 0
      ? h('p', { class: 'empty', 'data-refusals': '0' }, 'Nothing refused.')
      : h(
          'table',
          {},
          h(
            'thead',
            {},
            h('tr', {}, h('th', {}, 'Speaker'), h('th', {}, 'Reason'), h('th', {}, 'Count')),
          ),
          h('tbody', {}, ...rows),
        ),
  )
}
