import type { App } from './app.js'
import { problemText } from './chats-view.js'
import { h, replace } from './dom.js'
import { phoneName } from './words.js'

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

  constructor(app: App) {
    this.#app = app
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
        const list = this.#grants.get(l.id) ?? []
        return h(
          'section',
          { 'aria-label': `Grants on ${l.speaker.name}` },
          h('h2', {}, l.speaker.name),
          list.length === 0
            ? h('p', { class: 'empty' }, 'Nothing remembered: every gated action asks.')
            : h(
                'ul',
                { class: 'grants' },
                ...list.map((g) =>
                  h(
                    'li',
                    { class: 'grant-item', 'data-grant': g.id },
                    h('p', {}, h('code', {}, g.tool), ` · ${scopeText(g)}`),
                    h(
                      'p',
                      { class: 'meta' },
                      `${expiryText(g)} · said yes: ${phoneName(g.by, l.speaker.phone)}`,
                    ),
                    h(
                      'button',
                      {
                        class: 'deny',
                        'aria-label': `Revoke ${g.tool} (${expiryText(g)})`,
                        onclick: () => {
                          // Taking back a yes acts at once on the speaker: ask first.
                          const what = `${g.tool.replace(/_/g, ' ')}, ${expiryText(g)}`
                          if (
                            confirm(
                              `Revoke the remembered yes for ${what}? The speaker will ask again next time.`,
                            )
                          ) {
                            void this.#revoke(l.id, g.id)
                          }
                        },
                      },
                      'Revoke',
                    ),
                  ),
                ),
              ),
        )
      }),
    )
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
    if (this.#root && this.#app.tab === 'grants') this.render(this.#root)
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

function scopeText(g: GrantSummary): string {
  const v = g.scope === 'pattern' ? g.pattern : g.args
  const a =
    v && typeof v === 'object'
      ? Object.entries(v as Record<string, unknown>)
          .map(([k, x]) => `${k}: ${typeof x === 'string' ? x : JSON.stringify(x)}`)
          .join(', ')
      : ''
  return `${g.channel === 'voice' ? 'spoken' : 'typed'}${a ? ` · ${a}` : ''}`
}

function expiryText(g: GrantSummary): string {
  if (g.expiry === 'until' && g.until) return `until ${new Date(g.until).toLocaleTimeString()}`
  return 'for one conversation'
}
