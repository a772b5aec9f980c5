import type { GrantForm } from '../../src/protocol/forms.js'
import type { App } from './app.js'
import { problemText } from './chats-view.js'
import { h, replace } from './dom.js'
import { saidView } from './said-view.js'
import type { SpeakerLink } from './speaker-link.js'
import { clock, dayName } from './when.js'
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
      h('p', { class: 'hint' }, 'Every request the speakers asked, and how each one ended.'),
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
  const how =
    e.state === 'approved'
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
    { class: `history-item ${e.state}`, 'data-ending': e.id, 'data-state': e.state },
    h('p', { class: 'meta' }, `${clock(e.endedAt)} · ${l.speaker.name} · ${asked}`),
    h('p', { class: 'history-action' }, sentence(e.action)),
    saidView(e, me),
    args.length > 0 ? h('p', { class: 'meta' }, args.join(' · ')) : null,
    h('p', { class: 'history-how' }, how),
  )
}
