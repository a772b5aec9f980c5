import { h } from './dom.js'
import type { SpeakerLink, WakeCheckState } from './speaker-link.js'
import { when } from './when.js'
import { phoneName, sentence } from './words.js'

/** One wake as the speaker keeps it (docs/protocol.md, "Wakes"). */
interface Wake {
  id: number
  kind: 'wake' | 'missed'
  at: number
  phrase: string
  score: number
  confirmed: 'yes' | 'no' | 'not_asked' | 'pending'
  said?: string
  /** The speaker's own check of the phrase: did it hear it too (docs/protocol.md, "Wakes"). */
  local?: 'agreed' | 'refused'
  mark?: 'not_me'
  markedBy?: string
  features: number
}

/** What a mark or a note did, as the speaker answered it. */
interface Outcome {
  learnt: boolean
  why?: string
  negatives?: number
}

interface SpeakerWakes {
  wakes: Wake[]
  open: boolean
  loading: boolean
  /** What the last mark or note came to, or what went wrong, in words. */
  line?: { text: string; problem: boolean }
}

/**
 * The speakers' recent wakes (issue 46): read from each speaker over a signed `wakes`, marked
 * "that wasn't me" or noted "it missed me just now" with signed requests the speaker checks like
 * any other. Kept per speaker while the app runs; `changed` re-renders the Speakers screen.
 */
export class WakeLists {
  readonly #of = new Map<string, SpeakerWakes>()
  readonly #changed: () => void

  constructor(changed: () => void) {
    this.#changed = changed
  }

  of(link: SpeakerLink): SpeakerWakes {
    let s = this.#of.get(link.id)
    if (!s) {
      s = { wakes: [], open: false, loading: false }
      this.#of.set(link.id, s)
    }
    return s
  }

  toggled(link: SpeakerLink, open: boolean): void {
    const s = this.of(link)
    if (s.open === open) return
    s.open = open
    if (open) void this.refresh(link)
  }

  async refresh(link: SpeakerLink): Promise<void> {
    const s = this.of(link)
    s.loading = true
    const got: Wake[] = []
    try {
      await link.call(
        'wakes',
        { limit: 20 },
        {
          onReply: (r) => {
            const items = (r.body as { items?: unknown })?.items
            if (Array.isArray(items)) got.push(...(items as Wake[]))
          },
        },
      ).done
      s.wakes = got
    } catch (err) {
      s.line = { text: `The wakes could not be read: ${errorWords(err)}`, problem: true }
    }
    s.loading = false
    this.#changed()
  }

  async mark(link: SpeakerLink, wake: Wake): Promise<void> {
    await this.#ask(link, 'mark_wake', { wake: wake.id, mark: 'not_me' })
  }

  async missed(link: SpeakerLink): Promise<void> {
    await this.#ask(link, 'missed_wake', {})
  }

  async #ask(link: SpeakerLink, op: string, args: Record<string, unknown>): Promise<void> {
    const s = this.of(link)
    try {
      const done = (await link.call(op, args).done) as Outcome
      s.line = { text: outcomeWords(done, link.speaker.name), problem: false }
    } catch (err) {
      s.line = { text: `${link.speaker.name} did not take it: ${errorWords(err)}`, problem: true }
    }
    await this.refresh(link)
  }
}

/** The Speakers card's "Recent wakes", on a speaker that listens for a wake word. */
export function wakesView(lists: WakeLists, l: SpeakerLink): HTMLElement {
  const s = lists.of(l)
  const name = l.speaker.name
  const me = l.speaker.phone
  const checkState = checkStateWords(l.status?.wakeCheck, name)
  const details = h(
    'details',
    { class: 'wakes', 'data-wakes': l.id, open: s.open },
    h('summary', {}, 'Recent wakes'),
    h(
      'p',
      { class: 'hint' },
      `Each time ${name} woke: when, how sure it was, and whether it heard you say the wake phrase. If it woke when nobody spoke to it, tell it "That wasn't me" and it learns not to wake on that again. Only what it heard is kept, never a recording, and it stays on the speaker.`,
    ),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        { class: 'secondary', onclick: () => void lists.refresh(l) },
        s.loading ? 'Reading…' : 'Refresh',
      ),
      h(
        'button',
        { class: 'secondary', 'data-missed': '', onclick: () => void lists.missed(l) },
        'It missed me just now',
      ),
    ),
    checkState ? h('p', { class: 'hint', 'data-wake-check': '' }, checkState) : null,
    s.line
      ? h('p', { class: s.line.problem ? 'problem' : 'hint', 'data-wake-outcome': '' }, s.line.text)
      : null,
    s.wakes.length === 0 && !s.loading
      ? h('p', { class: 'empty' }, 'No wakes kept yet.')
      : h('ul', { class: 'wake-list' }, ...s.wakes.map((w) => wakeItem(lists, l, w, me))),
  )
  details.addEventListener('toggle', () => lists.toggled(l, (details as HTMLDetailsElement).open))
  return details
}

function wakeItem(lists: WakeLists, l: SpeakerLink, w: Wake, me: string): HTMLElement {
  if (w.kind === 'missed') {
    return h(
      'li',
      { class: 'wake missed', 'data-wake': String(w.id) },
      h('p', { class: 'meta' }, when(w.at)),
      h('p', {}, 'You said it missed you.'),
    )
  }
  return h(
    'li',
    { class: `wake${w.mark ? ' marked' : ''}`, 'data-wake': String(w.id) },
    h('p', { class: 'meta' }, `${when(w.at)} · ${sureWords(w.score)}`),
    h('p', {}, heardWords(w)),
    w.local === 'refused' ? h('p', { class: 'hint', 'data-local': '' }, checkWords(w)) : null,
    w.mark
      ? h(
          'p',
          { class: 'hint', 'data-marked': '' },
          `Marked "that wasn't me" on ${phoneName(w.markedBy ?? '', me)}.`,
        )
      : h(
          'button',
          {
            class: 'secondary',
            'aria-label': `That wasn't me: the wake ${when(w.at)} on ${l.speaker.name}`,
            onclick: () => void lists.mark(l, w),
          },
          "That wasn't me",
        ),
  )
}

/** How sure the detector was, in words (the score is the model's, not a probability to show). */
function sureWords(score: number): string {
  if (score >= 0.9) return 'very sure'
  if (score >= 0.7) return 'fairly sure'
  return 'not very sure'
}

function heardWords(w: Wake): string {
  const phrase = `"${w.phrase}"`
  if (w.confirmed === 'yes') {
    return w.said ? `It heard ${phrase} and you said: "${sentence(w.said)}"` : `It heard ${phrase}.`
  }
  if (w.confirmed === 'no') return `It thought it heard ${phrase}, but nobody said it.`
  if (w.confirmed === 'pending') return `It heard ${phrase}; it is still listening.`
  return `It heard ${phrase}.`
}

/** What the speaker's own check made of a wake it did not hear the phrase in. */
function checkWords(w: Wake): string {
  if (w.confirmed === 'yes')
    return 'Its own check on the speaker did not hear the phrase this time.'
  return 'Its own check on the speaker did not hear the phrase either.'
}

/**
 * The speaker's own check of the wake phrase, in words: whether it keeps a false wake's sound in
 * the room yet (docs/wake-word.md, "Earning its place"). Nothing when there is none to speak of.
 */
function checkStateWords(c: WakeCheckState | undefined, name: string): string | undefined {
  if (!c) return undefined
  if (c.state === 'shadow') {
    return `${name} is still learning to hear your wake phrase on its own: it has heard it with you ${c.streak ?? 0} of the ${c.of ?? 5} times in a row it needs. Until then it sends what it hears after a wake as before.`
  }
  if (c.state === 'earned' || c.state === 'on') {
    return `${name} checks the wake phrase on its own first: when it does not hear it, nothing it heard leaves the speaker.`
  }
  return undefined
}

function outcomeWords(o: Outcome, name: string): string {
  if (o.learnt) return `${name} learnt from it: it will not wake on that again.`
  return `${name} kept it, but learnt nothing yet: ${o.why ?? 'it could not.'}`
}

/** A failed call's sentence (a CallError's message is already in words). */
function errorWords(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
