import { h } from './dom.js'
import { sentence } from './words.js'

/** What a request carries as `said` (docs/protocol.md, "What was said"), and where it came from. */
export interface Said {
  readonly channel: 'voice' | 'text'
  readonly askedBy?: string
  readonly said?: string
}

/**
 * The words that led to a request, on its card and in the History: "Said in the room: …" for
 * speech, "Ben typed: …" for a typed message ("You typed" on that phone itself).
 */
export function saidView(r: Said, me: string): HTMLElement | null {
  if (r.said === undefined) return null
  return h(
    'p',
    { class: 'said', 'data-said': r.channel },
    h('span', { class: 'said-who' }, `${saidWho(r, me)}: `),
    h('q', {}, r.said),
  )
}

function saidWho(r: Said, me: string): string {
  if (r.channel === 'voice') return 'Said in the room'
  if (r.askedBy === undefined) return 'Typed on a phone'
  if (r.askedBy === me) return 'You typed'
  return `${sentence(r.askedBy)} typed`
}
