import { SENSITIVITIES, type Sensitivity } from '../../src/protocol/sensitivity.js'
import type { App } from './app.js'
import { problemText } from './chats-view.js'
import { h, replace } from './dom.js'
import { healthOf } from './health.js'
import { ownerView } from './owner-view.js'
import { parsePairing, type Speaker } from './pairing.js'
import { refusalWords } from './refusal-words.js'
import type { SpeakerLink } from './speaker-link.js'
import { voiceServiceView } from './voice-service.js'
import { wakesView } from './wakes-view.js'

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
    'aria-label': `Password for this phone on ${s.name}`,
  }) as HTMLInputElement
  const user = h('input', {
    type: 'text',
    name: 'username',
    value: s.username,
    autocomplete: 'username',
    'aria-label': `Sign-in name for this phone on ${s.name}`,
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
    online ? voiceServiceView(l.status?.providers) : null,
    online && l.status?.volume !== undefined ? volumeView(app, l, l.status.volume) : null,
    online && l.status?.sensitivity !== undefined
      ? sensitivityView(app, l, l.status.sensitivity)
      : null,
    online && l.status?.sensitivity !== undefined ? wakesView(app.wakes, l) : null,
    h('p', { class: 'meta' }, waitingText(l.pending().length)),
    online ? ownerView(app, l) : null,
    l.problem ? h('p', { class: 'problem', role: 'alert' }, l.problem) : null,
    h(
      'details',
      { class: 'login-box', open: l.state === 'refused' || l.state === 'needs-login' },
      h('summary', {}, "This phone's password"),
      h(
        'p',
        { class: 'hint' },
        `Whoever looks after ${s.name} set a password for this phone on your home's message hub (the MQTT broker the speaker uses). Enter it once; this phone keeps it.`,
      ),
      h(
        'form',
        {
          class: 'login',
          onsubmit: (e: Event) => {
            e.preventDefault()
            // Set to undefined alone, a stale notice stayed on screen until the next one.
            app.quiet()
            if (!pw.value && !s.password && l.state === 'needs-login') {
              app.say(
                `Type this phone's password first: the message hub did not let it connect to ${s.name} without one.`,
                'problem',
              )
              pw.focus()
              return
            }
            // How the connection goes is shown in the speaker's health line, not in a notice
            // that would outlive it.
            // An empty field connects with the password kept (or none): the broker says whether
            // that will do, and the health line says what it said.
            app.pair({
              ...s,
              username: user.value.trim() || s.phone,
              password: pw.value || s.password,
            })
          },
        },
        h('label', {}, 'Password ', pw),
        h('label', {}, 'Sign-in name (leave as it is unless told otherwise) ', user),
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
    h(
      'details',
      { class: 'details' },
      h('summary', {}, 'Technical details'),
      h(
        'dl',
        {},
        h('dt', {}, 'Speaker id'),
        h('dd', {}, h('code', {}, s.device)),
        h('dt', {}, 'This phone’s id'),
        h('dd', {}, h('code', {}, s.phone)),
        h('dt', {}, 'Sign-in name'),
        h('dd', {}, h('code', {}, s.username)),
        h('dt', {}, 'Message hub'),
        h('dd', {}, h('code', {}, s.wsUrl || s.broker || 'unknown')),
      ),
    ),
  )
}

/**
 * The speaker's volume, as its status says it, and a slider and two steps to set it: each a
 * signed `set_volume` (docs/protocol.md, "Speaker settings"); the slider shows what the speaker
 * reports back, not what was asked.
 */
function volumeView(app: App, l: SpeakerLink, volume: number): HTMLElement {
  const name = l.speaker.name
  const set = (v: number) => {
    const next = Math.min(100, Math.max(0, Math.round(v)))
    l.call('set_volume', { volume: next }).done.catch((err: unknown) => {
      app.say(`The volume of ${name} was not changed: ${problemText(err)}`, 'problem')
    })
  }
  const step = (label: string, by: number) =>
    h(
      'button',
      {
        class: 'secondary',
        'aria-label': `${label}: ${name}`,
        disabled: by < 0 ? volume === 0 : volume === 100,
        onclick: () => set(volume + by),
      },
      label,
    )
  return h(
    'div',
    { class: 'volume', 'data-volume': volume },
    h(
      'label',
      {},
      h('span', {}, 'Volume ', h('output', {}, `${volume} %`)),
      h('input', {
        type: 'range',
        min: 0,
        max: 100,
        step: 5,
        value: volume,
        'aria-label': `Volume of ${name}`,
        'aria-valuetext': `${volume} %`,
        onchange: (e: Event) => set(Number((e.target as HTMLInputElement).value)),
      }),
    ),
    h('div', { class: 'row' }, step('Quieter', -10), step('Louder', 10)),
    h('p', { class: 'hint' }, 'Timers and alarms stay audible even at 0 %.'),
  )
}

const SENSITIVITY_LABELS: Record<Sensitivity, string> = {
  low: 'Low',
  normal: 'Normal',
  high: 'High',
}

/**
 * How readily the speaker wakes, as its status says it (present only on a speaker that listens
 * for a wake word): three choices, each a signed `set_sensitivity` (docs/protocol.md, "Speaker
 * settings"); the choice shown is what the speaker reports back.
 */
function sensitivityView(app: App, l: SpeakerLink, now: Sensitivity): HTMLElement {
  const name = l.speaker.name
  return h(
    'fieldset',
    { class: 'sensitivity', 'data-sensitivity': now },
    h('legend', {}, 'How readily it wakes'),
    h(
      'div',
      { class: 'row' },
      ...SENSITIVITIES.map((s) =>
        h(
          'label',
          {},
          h('input', {
            type: 'radio',
            name: `sensitivity-${l.id}`,
            value: s,
            checked: s === now,
            'aria-label': `Wake sensitivity ${SENSITIVITY_LABELS[s]}: ${name}`,
            onchange: () =>
              l.call('set_sensitivity', { sensitivity: s }).done.catch((err: unknown) => {
                app.say(
                  `The sensitivity of ${name} was not changed: ${problemText(err)}`,
                  'problem',
                )
              }),
          }),
          ` ${SENSITIVITY_LABELS[s]}`,
        ),
      ),
    ),
    h(
      'p',
      { class: 'hint' },
      'Low: fewer wakes by mistake, but it may not hear you from across the room. High: it hears you from further away, and wakes by mistake more often.',
    ),
  )
}

function waitingText(n: number): string {
  if (n === 0) return 'Nothing waiting for an answer.'
  return n === 1 ? '1 request waiting for an answer.' : `${n} requests waiting for an answer.`
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
    'aria-label': 'Password for this phone, if you were given one',
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
      'Ask whoever looks after the speaker to pair this phone. On the speaker they type ',
      h('code', {}, 'nocturn pair'),
      ', a short id for this phone and its name — for example ',
      h('code', {}, 'nocturn pair ben "Ben\'s phone"'),
      ' — and it shows a QR code. Scan it with this phone’s camera, or paste the link it prints here.',
    ),
    h('label', {}, 'Pairing link ', uri),
    h('label', {}, 'Password for this phone, if you were given one ', pw),
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
  // A pairing link is followed to what waits for this phone; a password is asked for only if
  // the broker refuses the phone without one (the health line then says so, with a Fix button).
  app.say(`Paired with ${speaker.name}.`)
  app.setTab('approvals')
  return true
}

function diagnostics(app: App): HTMLElement {
  const items = [...app.links.values()].flatMap((l) =>
    [...l.refusals.entries()].map(([reason, n]) =>
      h(
        'li',
        { class: 'refusal', 'data-reason': reason },
        h(
          'p',
          {},
          app.links.size > 1 ? `${l.speaker.name}: ` : '',
          refusalWords(reason),
          ' ',
          h('span', { class: 'refusal-count', 'data-count': n }, n === 1 ? 'Once.' : `${n} times.`),
        ),
        h('details', { class: 'details' }, h('summary', {}, 'Reason code'), h('code', {}, reason)),
      ),
    ),
  )
  return h(
    'section',
    { class: 'diagnostics', 'aria-label': 'Diagnostics' },
    h('h2', {}, 'Diagnostics'),
    h(
      'p',
      { class: 'hint' },
      'Messages this phone refused to believe, and never showed you. A few are harmless (a request that arrived late); many may mean someone on your network is trying to fool the speaker’s phones.',
    ),
    items.length === 0
      ? h('p', { class: 'empty', 'data-refusals': '0' }, 'Nothing refused.')
      : h('ul', { class: 'refusals' }, ...items),
  )
}
