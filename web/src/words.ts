import type { GrantForm } from '../../src/protocol/forms.js'
import { until } from './when.js'

/**
 * The household's words for what the protocol carries (issue 23, finding 6): phones by whose they
 * are, arguments as "door: front", grants as how long a yes lasts. Ids and JSON stay one tap away
 * in a card's details.
 */
export function phoneName(id: string, me: string): string {
  if (id === me) return 'this phone'
  if (id === 'console') return 'the speaker itself'
  return `${id.charAt(0).toUpperCase()}${id.slice(1)}'s phone`
}

/** A phone's person inside a sentence: "you" on that phone itself, else by the name it was paired as. */
export function personName(id: string, me: string): string {
  return id === me ? 'you' : sentence(id)
}

export function sentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`
}

/** Each argument as "name: value", values in words where they are plain; nothing when none. */
export function argLines(args: unknown): string[] {
  if (args === null || args === undefined) return []
  if (typeof args !== 'object' || Array.isArray(args)) return [valueText(args)]
  return Object.entries(args as Record<string, unknown>).map(
    ([k, v]) => `${k.replace(/_/g, ' ')}: ${valueText(v)}`,
  )
}

function valueText(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (Array.isArray(v) && v.every((x) => typeof x !== 'object' || x === null)) return v.join(', ')
  if (v && typeof v === 'object') {
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k.replace(/_/g, ' ')} ${valueText(x)}`)
      .join('; ')
  }
  return JSON.stringify(v) ?? ''
}

/** What a remembered yes covers, as a sentence. */
export function grantWords(grant: GrantForm | undefined, critical: boolean): string {
  if (grant === undefined || grant === 'once') {
    return critical ? 'It asks every time.' : 'Just this once: it asks again next time.'
  }
  if (grant === 'session') return 'Remembered for this conversation.'
  return `Remembered until ${until(grant.until)}.`
}
