import type { GrantForm } from '../../src/protocol/forms.js'
import type { App } from './app.js'
import { problemText } from './chats-view.js'
import { h, replace } from './dom.js'
import { saidView } from './said-view.js'
import type { SpeakerLink } from './speaker-link.js'
import { clock, dayName, until, when } from './when.js'
import { argLines, grantWords, phoneName, sentence } from './words.js'

/** One ending as the device keeps it (docs/protocol.md "History"). */
interface Ending {
  id: string
  tool: string
  action: string
  args?: unknown
  critical: boolean
  channel: 'voice' | 'text'
  askedBy?: string
  said?: string
  state: 'approved' | 'denied' | 'withdrawn' | 'expired'
  by?: string
  grant?: GrantForm
  /** Allowed by a remembered yes, nobody asked (absent from speakers older than it). */
  coveredBy?: {
    grant: string
    by: string
    createdAt: number
    expiry: 'conversation' | 'until'
    until?: number
  }
  askedAt: number
  endedAt: number
}

/**
 * History: every ending each speaker kept, read from the speaker over a signed request, newest
 * first and grouped by day — "who let the plumber in, and when?".
 */
export class HistoryView {
  readonly #app: App
  readonly #endings = new Map<string, Ending[]>()
  #problem = ''
  #root: HTMLElement | undefined

  constructor(app: App) {
    this.#app = app
  }

  render(root: HTMLElement): void {
    this.#root = root
    const links = [...this.#app.links.values()]
    if (links.length === 0) {
      replace(root, h('p', { class: 'empty' }, 'No speaker paired yet. Open Speakers to pair one.'))
      return
    }
    const all = links
      .flatMap((l) => (this.#endings.get(l.id) ?? []).map((e) => ({ e, l })))
      .sort((a, b) => b.e.endedAt - a.e.endedAt)
    const days = new Map<string, typeof all>()
    for (const x of all) {
      const day = dayName(x.e.endedAt)
      days.set(day, [...(days.get(day) ?? []), x])
    }
    replace(
      root,
      h(
        'p',
        { class: 'hint' },
        'Everything the speakers needed a yes for: each request, how it ended, and what a remembered yes allowed.',
      ),
      h('button', { class: 'secondary', onclick: () => void this.refresh() }, 'Refresh'),
      this.#problem ? h('p', { class: 'problem', role: 'alert' }, this.#problem) : null,
      all.length === 0 ? h('p', { class: 'empty' }, 'Nothing asked yet.') : null,
      ...[...days.entries()].map(([day, items]) =>
        h(
          'section',
          { class: 'day', 'aria-label': day },
          h('h2', {}, day),
          h('ul', { class: 'history' }, ...items.map(({ e, l }) => endingItem(e, l))),
        ),
      ),
    )
  }

  /** Reads each connected speaker's history again (a page of the newest 100). */
  async refresh(): Promise<void> {
    const problems: string[] = []
    for (const l of this.#app.links.values()) {
      if (!l.connected) continue
      const items: Ending[] = []
      try {
        await l.call(
          'history',
          { limit: 100 },
          {
            onReply: (r) => {
              const got = (r.body as { items?: unknown })?.items
              if (Array.isArray(got)) items.push(...(got as Ending[]))
            },
          },
        ).done
        this.#endings.set(l.id, items)
        for (const e of [...items].reverse())
          this.#app.actions.learn(l.id, e.tool, e.args, e.action)
      } catch (err) {
        problems.push(problemText(err))
      }
    }
    this.#problem = problems.join(' ')
    if (this.#root && this.#app.tab === 'history') this.render(this.#root)
  }
}

function endingItem(e: Ending, l: SpeakerLink): HTMLElement {
  const me = l.speaker.phone
  const how = e.coveredBy
    ? coveredWords(e.coveredBy, me)
    : e.state === 'approved'
      ? `${e.by === me ? 'You approved' : `Approved on ${phoneName(e.by ?? '', me)}`}. ${grantWords(e.grant, e.critical)}`
      : e.state === 'denied'
        ? e.by === me
          ? 'You denied it.'
          : `Denied on ${phoneName(e.by ?? '', me)}.`
        : e.state === 'withdrawn'
          ? 'Withdrawn: the speaker no longer needed an answer.'
          : 'Expired: nobody answered in time.'
  const asked =
    e.channel === 'voice'
      ? 'asked by voice in the room'
      : `typed on ${e.askedBy ? phoneName(e.askedBy, me) : 'a phone'}`
  const args = argLines(e.args)
  return h(
    'li',
    {
      class: `history-item ${e.state}${e.coveredBy ? ' covered' : ''}`,
      'data-ending': e.id,
      'data-state': e.state,
      'data-covered': e.coveredBy ? 'true' : undefined,
    },
    h('p', { class: 'meta' }, `${clock(e.endedAt)} · ${l.speaker.name} · ${asked}`),
    h('p', { class: 'history-action' }, sentence(e.action)),
    saidView(e, me),
    args.length > 0 ? h('p', { class: 'meta' }, args.join(' · ')) : null,
    h('p', { class: 'history-how' }, how),
  )
}

/**
 * A call a remembered yes allowed, nobody asked: whose yes, when it was said, and how long it
 * holds — "Allowed by Anna's yes at 13:05, until 14:05. Nobody was asked."
 */
function coveredWords(g: NonNullable<Ending['coveredBy']>, me: string): string {
  const whose =
    g.by === me ? 'your' : g.by === 'console' ? "the speaker's own" : `${sentence(g.by)}'s`
  const said = dayName(g.createdAt) === 'Today' ? clock(g.createdAt) : when(g.createdAt)
  const lasts =
    g.expiry === 'until' && g.until !== undefined
      ? `until ${until(g.until)}`
      : 'for this conversation'
  return `Allowed by ${whose} yes at ${said}, ${lasts}. Nobody was asked.`
}
