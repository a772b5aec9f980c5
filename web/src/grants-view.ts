import { toolWords } from './action-words.js'
import type { App } from './app.js'
import { problemText } from './chats-view.js'
import { h, replace } from './dom.js'
import type { SpeakerLink } from './speaker-link.js'
import { until } from './when.js'
import { argLines, sentence } from './words.js'

interface GrantSummary {
  id: string
  tool: string
  channel: string
  scope: string
  args?: unknown
  pattern?: Record<string, unknown>
  expiry: string
  conversation?: string
  until?: number
  by: string
}

/** Every remembered yes of every paired speaker, each with a button to take it back. */
export class GrantsView {
  #grants = new Map<string, GrantSummary[]>()
  #problem = ''
  #root: HTMLElement | undefined

  readonly #app: App
  /** Reads the speakers' History, which teaches the sentences of tools this phone never saw asked. */
  readonly #learn: () => Promise<void>

  constructor(app: App, learn: () => Promise<void>) {
    this.#app = app
    this.#learn = learn
  }

  render(root: HTMLElement): void {
    this.#root = root
    if (this.#app.links.size === 0) {
      replace(root, h('p', { class: 'empty' }, 'No speaker paired yet. Open Speakers to pair one.'))
      return
    }
    replace(
      root,
      h('p', { class: 'hint' }, 'Each remembered yes lets the speaker act without asking again.'),
      h('button', { class: 'secondary', onclick: () => void this.refresh() }, 'Refresh'),
      this.#problem ? h('p', { class: 'problem', role: 'alert' }, this.#problem) : null,
      ...[...this.#app.links.values()].map((l) => {
        const list = this.#grants.get(l.id)
        return h(
          'section',
          { 'aria-label': `Grants on ${l.speaker.name}` },
          h('h2', {}, l.speaker.name),
          // Never read (not connected yet): "nothing remembered" would be a guess.
          list === undefined
            ? h(
                'p',
                { class: 'empty', 'data-unheard': '' },
                l.connected
                  ? `Reading what ${l.speaker.name} remembers…`
                  : `Not connected to ${l.speaker.name}: what it remembers shows once this phone is connected.`,
              )
            : list.length === 0
              ? h(
                  'p',
                  { class: 'empty' },
                  `Nothing remembered: ${l.speaker.name} asks each time it needs a yes.`,
                )
              : h('ul', { class: 'grants' }, ...list.map((g) => this.#item(l, g))),
        )
      }),
    )
  }

  /** One remembered yes in the words the Approvals and History screens use. */
  #item(l: SpeakerLink, g: GrantSummary): HTMLElement {
    const what = this.#words(l, g)
    const lasts =
      g.expiry === 'until' && g.until ? `until ${until(g.until)}` : 'for one conversation'
    const args = argLines(g.scope === 'pattern' ? g.pattern : g.args)
    return h(
      'li',
      { class: 'grant-item', 'data-grant': g.id },
      h('p', { class: 'grant-action' }, what),
      args.length > 0 ? h('p', { class: 'meta' }, args.join(' · ')) : null,
      h(
        'p',
        { class: 'meta' },
        `${g.channel === 'voice' ? 'When said in the room' : 'When typed on a phone'}, ${lasts}. ${saidYes(g.by, l.speaker.phone)}`,
      ),
      h(
        'button',
        {
          class: 'deny',
          'aria-label': `Revoke: ${what}, ${lasts}`,
          onclick: () => {
            // Taking back a yes acts at once on the speaker: ask first.
            if (
              confirm(
                `Take back the remembered yes for "${what}", ${lasts}? ${l.speaker.name} will ask again next time.`,
              )
            ) {
              void this.#revoke(l.id, g.id)
            }
          },
        },
        'Revoke',
      ),
    )
  }

  #words(l: SpeakerLink, g: GrantSummary): string {
    const exact = g.scope !== 'pattern'
    const said = this.#app.actions.find(l.id, g.tool, exact ? g.args : g.pattern, exact)
    return said === undefined ? toolWords(g.tool) : sentence(said)
  }

  async refresh(): Promise<void> {
    this.#problem = ''
    const problems: string[] = []
    for (const l of this.#app.links.values()) {
      if (l.state !== 'connected') continue
      const items: GrantSummary[] = []
      try {
        await l.call(
          'grants',
          {},
          {
            onReply: (r) => {
              const got = (r.body as { items?: unknown })?.items
              if (Array.isArray(got)) items.push(...(got as GrantSummary[]))
            },
          },
        ).done
        this.#grants.set(l.id, items)
      } catch (err) {
        problems.push(problemText(err))
      }
    }
    this.#problem = problems.join(' ')
    const unknown = [...this.#app.links.values()].some((l) =>
      (this.#grants.get(l.id) ?? []).some((g) => !this.#knows(l, g)),
    )
    if (unknown) await this.#learn()
    if (this.#root && this.#app.tab === 'grants') this.render(this.#root)
  }

  #knows(l: SpeakerLink, g: GrantSummary): boolean {
    const exact = g.scope !== 'pattern'
    return this.#app.actions.find(l.id, g.tool, exact ? g.args : g.pattern, exact) !== undefined
  }

  async #revoke(linkId: string, grant: string): Promise<void> {
    const l = this.#app.links.get(linkId)
    if (!l) return
    try {
      await l.call('revoke', { grant }).done
      this.#app.say('Revoked: the speaker will ask again next time.')
    } catch (err) {
      this.#problem = problemText(err)
    }
    await this.refresh()
  }
}

function saidYes(by: string, me: string): string {
  if (by === me) return 'You said yes.'
  if (by === 'console') return 'Said yes on the speaker itself.'
  return `${sentence(by)} said yes.`
}
