import { toolWords } from './action-words.js'
import type { App } from './app.js'
import { h, replace } from './dom.js'
import { CallError, type SpeakerLink } from './speaker-link.js'
import { clock, when } from './when.js'
import { personName, sentence } from './words.js'

interface Summary {
  id: string
  channel: string
  updatedAt: number
  summary: string
  last: { role: string; text: string } | null
  /** The phones that typed in it, in the order each first typed (absent from older speakers). */
  typedBy?: unknown
}

interface Message {
  seq: number
  role: string
  text?: string
  toolName?: string
  args?: unknown
  outcome?: { ok: boolean; error?: string }
  channel?: string
  at: number
  /** A typed message: the phone that typed it (absent from speakers older than it). */
  by?: string
  truncated?: boolean
}

/** Conversations of one speaker: the list, one chat read and followed live, typing, deleting. */
export class ChatsView {
  #speaker = ''
  #list: Summary[] = []
  #open: string | undefined
  #messages = new Map<number, Message>()
  #streaming = ''
  #waitingFor = ''
  #problem = ''
  #busy = false
  #follow: string | undefined
  #root: HTMLElement | undefined
  /** The message being sent, shown at once under `key` until the stored copy arrives. */
  #sending: { key: number; text: string } | undefined

  readonly #app: App

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
    if (!this.#app.links.has(this.#speaker)) this.#speaker = links[0]?.id ?? ''
    const picker =
      links.length > 1
        ? h(
            'label',
            { class: 'picker' },
            'Speaker ',
            h(
              'select',
              {
                'aria-label': 'Speaker',
                onchange: (e: Event) => {
                  this.#speaker = (e.target as HTMLSelectElement).value
                  this.#close()
                  void this.refresh()
                },
              },
              ...links.map((l) =>
                h('option', { value: l.id, selected: l.id === this.#speaker }, l.speaker.name),
              ),
            ),
          )
        : null
    replace(
      root,
      picker,
      this.#problem ? h('p', { class: 'problem', role: 'alert' }, this.#problem) : null,
      this.#open === undefined ? this.#listView() : this.#chatView(),
    )
  }

  /** Loads the list (or the open chat) again from the speaker. */
  async refresh(): Promise<void> {
    const link = this.#link()
    if (!link) return
    if (this.#open !== undefined && this.#open !== 'new') return this.#load(this.#open)
    this.#problem = ''
    const items: Summary[] = []
    try {
      await link.call(
        'list',
        { limit: 50 },
        { onReply: (r) => items.push(...itemsOf<Summary>(r.body)) },
      ).done
      this.#list = items
    } catch (err) {
      this.#problem = problemText(err)
    }
    this.#rerender()
  }

  #link(): SpeakerLink | undefined {
    return this.#app.links.get(this.#speaker)
  }

  #rerender(): void {
    if (this.#root && this.#app.tab === 'chats') this.render(this.#root)
  }

  #listView(): HTMLElement {
    return h(
      'section',
      { 'aria-label': 'Conversations' },
      h(
        'div',
        { class: 'row' },
        h('button', { onclick: () => this.#start() }, 'New chat'),
        h('button', { class: 'secondary', onclick: () => void this.refresh() }, 'Refresh'),
      ),
      this.#list.length === 0
        ? h('p', { class: 'empty' }, 'No conversations yet.')
        : h(
            'ul',
            { class: 'chats', 'aria-label': 'Conversation list' },
            ...this.#list.map((c) =>
              h(
                'li',
                {},
                h(
                  'button',
                  {
                    class: 'chat-item',
                    'data-conversation': c.id,
                    onclick: () => void this.#load(c.id),
                  },
                  h('span', { class: 'chat-title' }, c.summary || '(empty)'),
                  h(
                    'span',
                    { class: 'chat-meta', 'data-channel': c.channel },
                    `${howItCame(c, this.#link()?.speaker.phone ?? '')} · ${this.#link()?.speaker.name ?? ''} · ${when(c.updatedAt)}`,
                  ),
                ),
              ),
            ),
          ),
    )
  }

  #chatView(): HTMLElement {
    const input = h('textarea', {
      name: 'message',
      rows: 2,
      maxlength: 4000,
      'aria-label': 'Message to the speaker',
      placeholder: 'Type a message…',
    }) as HTMLTextAreaElement
    const msgs = [...this.#messages.values()].sort((a, b) => a.seq - b.seq)
    return h(
      'section',
      { class: 'chat', 'aria-label': 'Conversation' },
      h(
        'div',
        { class: 'row' },
        h('button', { class: 'secondary', onclick: () => this.#back() }, '‹ All chats'),
        this.#open !== 'new'
          ? h(
              'button',
              { class: 'secondary danger', onclick: () => void this.#delete() },
              'Delete chat',
            )
          : null,
      ),
      h(
        'ol',
        { class: 'messages', 'aria-live': 'polite', 'aria-label': 'Messages' },
        ...msgs.map((m) => this.#messageView(m)),
        this.#streaming ? h('li', { class: 'msg assistant streaming' }, this.#streaming) : null,
      ),
      this.#waitingFor
        ? h('p', { class: 'sent', role: 'status' }, `Waiting for approval: ${this.#waitingFor}`)
        : null,
      h(
        'form',
        {
          class: 'compose',
          onsubmit: (e: Event) => {
            e.preventDefault()
            const text = input.value.trim()
            if (text) void this.#say(text)
          },
        },
        input,
        h('button', { type: 'submit', disabled: this.#busy }, 'Send'),
      ),
    )
  }

  #start(): void {
    this.#close()
    this.#open = 'new'
    this.#rerender()
  }

  #back(): void {
    this.#close()
    void this.refresh()
  }

  #close(): void {
    const link = this.#link()
    if (this.#follow && link) {
      link.forget(this.#follow)
      link.call('unfollow', {}).done.catch(() => {})
    }
    this.#follow = undefined
    this.#open = undefined
    this.#messages.clear()
    this.#streaming = ''
    this.#waitingFor = ''
    this.#problem = ''
  }

  async #load(id: string): Promise<void> {
    const link = this.#link()
    if (!link) return
    this.#open = id
    this.#problem = ''
    try {
      let after = 0
      for (let page = 0; page < 20; page++) {
        const got: Message[] = []
        const done = (await link.call(
          'show',
          { conversation: id, afterSeq: after, limit: 100 },
          { onReply: (r) => got.push(...itemsOf<Message>(r.body)) },
        ).done) as { next?: { afterSeq: number } }
        for (const m of got) this.#messages.set(m.seq, m)
        if (got.length < 100 || !done.next) break
        after = done.next.afterSeq
      }
      if (this.#follow !== undefined) link.forget(this.#follow)
      const follow = link.call(
        'follow',
        { conversation: id, forMs: 30 * 60_000 },
        { keep: true, onReply: (r) => this.#onFollow(id, r.kind, r.body) },
      )
      this.#follow = follow.id
      follow.done.catch(() => {})
    } catch (err) {
      this.#problem = problemText(err)
    }
    this.#rerender()
  }

  #onFollow(id: string, kind: string, body: unknown): void {
    if (this.#open !== id) return
    const b = body as { message?: Message; state?: string; action?: string }
    if (kind === 'message' && b.message) {
      this.#messages.set(b.message.seq, b.message)
      // The stored copy of what this phone just sent replaces the one shown while sending:
      // with both, the message showed twice while the answer streamed in (issue 23, finding 11).
      const sending = this.#sending
      if (sending && b.message.role === 'user' && b.message.text === sending.text) {
        this.#messages.delete(sending.key)
        this.#sending = undefined
      }
    }
    this.#rerender()
  }

  async #say(text: string): Promise<void> {
    const link = this.#link()
    if (!link || this.#open === undefined) return
    this.#busy = true
    this.#problem = ''
    this.#streaming = ''
    const temp = -Date.now()
    this.#messages.set(temp, {
      seq: Number.MAX_SAFE_INTEGER - 1,
      role: 'user',
      text,
      channel: 'sending',
      at: Date.now(),
    })
    this.#sending = { key: temp, text }
    this.#rerender()
    try {
      const done = (await link.call(
        'say',
        { conversation: this.#open, text },
        {
          onReply: (r) => {
            const b = r.body as { text?: string; action?: string }
            if (r.kind === 'part' && b.text) this.#streaming += b.text
            if (r.kind === 'pending') this.#waitingFor = b.action ?? ''
            this.#rerender()
          },
        },
      ).done) as { conversation?: string | { id: string } }
      this.#messages.delete(temp)
      this.#sending = undefined
      this.#streaming = ''
      this.#waitingFor = ''
      const c = done.conversation
      const id = typeof c === 'string' ? c : (c?.id ?? this.#open)
      this.#busy = false
      await this.#load(id)
    } catch (err) {
      this.#messages.delete(temp)
      this.#sending = undefined
      this.#busy = false
      this.#streaming = ''
      this.#waitingFor = ''
      this.#problem = problemText(err)
      this.#rerender()
    }
  }

  /**
   * One message, saying who said it, how and when (issue 44): a person's words "Said in the room"
   * or "Typed by Ben" (the phone that typed them; "Typed" from a speaker that does not say), "You"
   * only while this phone sends them; the speaker's by its name; an action in
   * the sentence its request used.
   */
  #messageView(m: Message): HTMLElement {
    const link = this.#link()
    const speaker = link?.speaker.name ?? 'The speaker'
    if (m.truncated) return h('li', { class: `msg ${m.role}` }, '(too long to show on a phone)')
    if (m.role === 'tool') {
      const ok = m.outcome?.ok !== false
      const tool = m.toolName ?? ''
      const known = link && this.#app.actions.find(link.id, tool, m.args, true)
      const what = known ? sentence(known) : tool ? toolWords(tool) : 'An action'
      return h(
        'li',
        { class: 'msg tool' },
        ok ? `${what}: done.` : `${what}: did not happen. ${m.outcome?.error ?? ''}`.trim(),
      )
    }
    if (m.role === 'assistant' && !m.text) return h('li', { class: 'msg hidden' })
    const how =
      m.role !== 'user'
        ? speaker
        : m.channel === 'sending'
          ? 'You'
          : m.channel === 'voice'
            ? 'Said in the room'
            : m.by
              ? `Typed by ${personName(m.by, link?.speaker.phone ?? '')}`
              : 'Typed'
    return h(
      'li',
      {
        class: `msg ${m.role} ${m.channel === 'voice' ? 'spoken' : 'typed'}`,
        'data-seq': m.seq,
        'data-channel': m.channel ?? '',
      },
      h(
        'span',
        { class: 'who' },
        how,
        m.channel === 'sending' ? null : ` · ${clock(m.at)}`,
        h('span', { class: 'vh' }, ':'),
      ),
      h('span', { class: 'text' }, m.text ?? ''),
    )
  }

  async #delete(): Promise<void> {
    const link = this.#link()
    const id = this.#open
    if (!link || !id || id === 'new') return
    if (!confirm('Delete this conversation from the speaker? This cannot be undone.')) return
    try {
      await link.call('delete', { conversation: id }).done
      this.#back()
      this.#app.say('Conversation deleted.')
    } catch (err) {
      this.#problem = problemText(err)
      this.#rerender()
    }
  }
}

/**
 * How a chat came about, for its line in the list, naming who typed it as its messages do: "Typed
 * by Ben", "Typed by Anna and you". A chat begun in the room says so first, and who carried it on
 * by typing after it ("Spoken in the room, continued by Ben"): how it began is what the line has
 * always said, who typed is what tells two phones' chats apart. A speaker that does not say who
 * typed (older than `typedBy`) reads "Typed", as before.
 */
function howItCame(c: Summary, me: string): string {
  const typists = Array.isArray(c.typedBy)
    ? c.typedBy.filter((p): p is string => typeof p === 'string' && p !== '')
    : []
  const who = andList(typists.map((p) => personName(p, me)))
  if (c.channel === 'voice') {
    return who ? `Spoken in the room, continued by ${who}` : 'Spoken in the room'
  }
  return who ? `Typed by ${who}` : 'Typed'
}

/** "Anna", "Anna and Ben", "Anna, Ben and you"; '' for none. */
function andList(names: string[]): string {
  const last = names.at(-1) ?? ''
  return names.length < 2 ? last : `${names.slice(0, -1).join(', ')} and ${last}`
}

function itemsOf<T>(body: unknown): T[] {
  const items = (body as { items?: unknown })?.items
  return Array.isArray(items) ? (items as T[]) : []
}

export function problemText(err: unknown): string {
  if (err instanceof CallError) return err.message
  return err instanceof Error ? err.message : String(err)
}
