import { h } from './dom.js'
import type { SpeakerLink } from './speaker-link.js'

/**
 * How each paired speaker stands, in words, on every screen (issue 23): a phone that cannot hear a
 * speaker must never look like a phone with nothing to do. `ok` is false whenever a request
 * waiting on that speaker could be missed, or an answer given now would not go out at once.
 */
export function healthOf(l: SpeakerLink): { ok: boolean; text: string } {
  const name = l.speaker.name
  switch (l.state) {
    case 'connected':
      if (l.status && !l.status.online) {
        return { ok: false, text: `${name} is switched off or has lost the broker.` }
      }
      return { ok: true, text: `${name}: connected` }
    case 'connecting':
      return { ok: false, text: `Connecting to ${name}…` }
    case 'reconnecting':
      return {
        ok: false,
        text: `${name}: connection lost, reconnecting. An answer you give now goes out when the phone reconnects.`,
      }
    case 'unreachable':
      return { ok: false, text: `${name}: cannot reach the broker; trying again.` }
    case 'refused':
      return {
        ok: false,
        text: `${name}: not connected — the broker refused this phone's password.`,
      }
    case 'needs-login':
      return {
        ok: false,
        text: `${name}: not connected — the broker asks for this phone's password.`,
      }
    case 'no-broker':
      return { ok: false, text: `${name}: not connected — the broker's address is unknown.` }
  }
}

/** One line per speaker; a fix that needs the person offers the way to Speakers. */
export function healthView(links: SpeakerLink[], openSpeakers: () => void): HTMLElement | null {
  if (links.length === 0) return null
  return h(
    'ul',
    { class: 'health', 'aria-label': 'Connection to each speaker' },
    ...links.map((l) => {
      const { ok, text } = healthOf(l)
      const fixable = l.state === 'refused' || l.state === 'needs-login' || l.state === 'no-broker'
      return h(
        'li',
        {
          class: ok ? 'ok' : 'down',
          'data-health': l.state,
          'data-speaker-health': l.speaker.device,
        },
        h('span', { class: 'dot', 'aria-hidden': 'true' }),
        h('span', { class: 'health-text' }, text),
        fixable
          ? h(
              'button',
              {
                class: 'secondary small',
                'aria-label': `Fix the connection to ${l.speaker.name}`,
                onclick: openSpeakers,
              },
              'Fix',
            )
          : null,
      )
    }),
  )
}
