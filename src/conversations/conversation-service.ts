import type { Conversation, StoredMessage } from '../core/conversation.js'
import { NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { PendingNotice } from '../core/types.js'
import type { Clock } from '../ports/clock.js'
import type { TranscriptStore } from '../ports/transcript-store.js'
import type { TurnLoop } from '../turn/turn-loop.js'
import type { LiveConversations } from './live-conversations.js'

/** Larger pages are refused, not clamped: a phone asking for a million rows is a bug or a probe. */
const MAX_LIST_PAGE = 100
const MAX_MESSAGE_PAGE = 500
/** A typed message longer than this is refused before it reaches the model or the store. */
const MAX_TYPED_CHARS = 4000
/** A summary names this many phones that typed at most: a list line, not a roll call. */
const MAX_TYPED_BY = 5

export interface ConversationSummary {
  readonly id: string
  readonly channel: Conversation['channel']
  readonly createdAt: number
  readonly updatedAt: number
  /** One line: the title, or the first thing the person said. */
  readonly summary: string
  readonly last: {
    readonly role: StoredMessage['role']
    readonly text: string
    readonly at: number
  } | null
  /**
   * The paired phones that typed in it, in the order each first typed (docs/protocol.md,
   * "Summary"); absent when no stored message says who typed it.
   */
  readonly typedBy?: readonly string[]
}

/** The details of a conversation sent beside its id in `show` and `say` answers. */
/** Which page of the list: `before` and `beforeId` are the previous page's `next` (docs/protocol.md). */
export interface ListPage {
  readonly limit?: number
  readonly before?: number
  readonly beforeId?: string
}

export interface ConversationInfo {
  readonly channel: Conversation['channel']
  readonly title: string | null
  readonly createdAt: number
  readonly updatedAt: number
}

export interface SayRequest {
  /** An existing conversation's id, or 'new'. */
  readonly conversationId: string
  readonly text: string
  /** The paired phone that typed it. */
  readonly phone: string
  /** Told the conversation's id (a new one's too) before the turn stores anything in it. */
  readonly onConversation?: (id: string) => void
  readonly onText?: (delta: string) => void
  readonly onPending?: (notice: PendingNotice) => void
  readonly signal?: AbortSignal
}

export interface ConversationServiceDeps {
  readonly store: TranscriptStore
  readonly turns: TurnLoop
  readonly live: LiveConversations
  readonly clock: Clock
  readonly logger: Logger
}

/**
 * What a paired phone may do with this device's conversations — list, read, continue by typing,
 * delete — independent of the transport that carries the requests.
 */
export class ConversationService {
  readonly #deps: ConversationServiceDeps
  /** One typed turn at a time per conversation: later messages wait their turn, never interleave. */
  readonly #queues = new Map<string, Promise<unknown>>()

  constructor(deps: ConversationServiceDeps) {
    this.#deps = deps
  }

  list(page: ListPage = {}): ConversationSummary[] {
    return this.listPage(page).items
  }

  /** One page of summaries, and whether another page follows (one row more is read to know). */
  listPage(page: ListPage = {}): {
    items: ConversationSummary[]
    more: boolean
  } {
    const limit = pageSize(page.limit, 20, MAX_LIST_PAGE, 'limit')
    if (page.before !== undefined && !Number.isFinite(page.before)) {
      throw new NocturnError('NOC_ERR_BAD_REQUEST', 'before: expected a time in milliseconds')
    }
    if (page.beforeId !== undefined && page.before === undefined) {
      throw new NocturnError(
        'NOC_ERR_BAD_REQUEST',
        "beforeId: needs before (both come from the previous page's next)",
      )
    }
    const rows = this.#deps.store.listConversations({
      limit: limit + 1,
      before: page.before,
      beforeId: page.beforeId,
    })
    return { items: rows.slice(0, limit).map((c) => this.#summary(c)), more: rows.length > limit }
  }

  /** One page of messages; `more` says whether messages follow it (one more is read to know). */
  show(req: { id: string; afterSeq?: number; limit?: number }): {
    conversation: Conversation
    messages: StoredMessage[]
    more: boolean
  } {
    const conversation = this.#get(req.id)
    const limit = pageSize(req.limit, 100, MAX_MESSAGE_PAGE, 'limit')
    const afterSeq = req.afterSeq ?? 0
    if (!Number.isInteger(afterSeq) || afterSeq < 0) {
      throw new NocturnError('NOC_ERR_BAD_REQUEST', 'afterSeq: expected a whole number ≥ 0')
    }
    const rows = this.#deps.store.messages(conversation.id, { afterSeq, limit: limit + 1 })
    return { conversation, messages: rows.slice(0, limit), more: rows.length > limit }
  }

  /** A conversation's details as a phone sees them beside its id. */
  info(id: string): ConversationInfo {
    const c = this.#get(id)
    return { channel: c.channel, title: c.title, createdAt: c.createdAt, updatedAt: c.updatedAt }
  }

  async say(req: SayRequest): Promise<{ conversationId: string; text: string }> {
    const text = req.text.trim()
    if (text === '') throw new NocturnError('NOC_ERR_BAD_REQUEST', 'text: empty message')
    if (text.length > MAX_TYPED_CHARS) {
      throw new NocturnError(
        'NOC_ERR_BAD_REQUEST',
        `text: longer than ${MAX_TYPED_CHARS} characters`,
      )
    }
    const id =
      req.conversationId === 'new'
        ? this.#deps.store.createConversation({ channel: 'text', at: this.#deps.clock.now() }).id
        : this.#get(req.conversationId).id
    req.onConversation?.(id)
    // A conversation being spoken right now is refused rather than queued: the live model holds its
    // own context and would never see the typed message, so the stored history would fork.
    if (this.#deps.live.isLive(id)) {
      throw new NocturnError(
        'NOC_ERR_CONVERSATION_LIVE',
        'This conversation is being spoken right now; send your message when it ends, or start a new one.',
      )
    }
    const previous = this.#queues.get(id) ?? Promise.resolve()
    const turn = previous.then(() => {
      if (this.#deps.live.isLive(id)) {
        throw new NocturnError(
          'NOC_ERR_CONVERSATION_LIVE',
          'This conversation started being spoken; send your message when it ends.',
        )
      }
      this.#deps.logger.info({ conversation: id, phone: req.phone }, 'typed turn from phone')
      return this.#deps.turns.run({
        conversationId: id,
        text,
        channel: 'text',
        askedBy: req.phone,
        signal: req.signal,
        onText: req.onText,
        onPending: req.onPending,
      })
    })
    const settled = turn.catch(() => undefined)
    this.#queues.set(id, settled)
    void settled.then(() => {
      if (this.#queues.get(id) === settled) this.#queues.delete(id)
    })
    const result = await turn
    return { conversationId: id, text: result.text }
  }

  delete(id: string): void {
    const conversation = this.#get(id)
    if (this.#deps.live.isLive(conversation.id)) {
      throw new NocturnError(
        'NOC_ERR_CONVERSATION_LIVE',
        'This conversation is being spoken right now.',
      )
    }
    this.#deps.store.deleteConversation(conversation.id)
    this.#deps.logger.info({ conversation: conversation.id }, 'conversation deleted')
  }

  #get(id: string): Conversation {
    const c =
      typeof id === 'string' && id.length <= 64 ? this.#deps.store.getConversation(id) : undefined
    if (!c)
      throw new NocturnError('NOC_ERR_NOT_FOUND', 'There is no such conversation on this device.')
    return c
  }

  #summary(c: Conversation): ConversationSummary {
    const first = this.#deps.store.messages(c.id, { limit: 1 })[0]
    const lastRow = this.#deps.store.lastMessage(c.id)
    const line = c.title ?? (first?.role === 'user' ? first.text : '')
    const typedBy = this.#deps.store.typedBy(c.id, MAX_TYPED_BY)
    return {
      id: c.id,
      channel: c.channel,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
      summary: line.length > 80 ? `${line.slice(0, 79)}…` : line,
      last: lastRow ? { role: lastRow.role, text: textOf(lastRow), at: lastRow.at } : null,
      ...(typedBy.length > 0 && { typedBy }),
    }
  }
}

function pageSize(value: number | undefined, fallback: number, max: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new NocturnError(
      'NOC_ERR_BAD_REQUEST',
      `${name}: expected a whole number from 1 to ${max}`,
    )
  }
  return value
}

function textOf(m: StoredMessage): string {
  if (m.role === 'tool')
    return m.outcome.ok ? `${m.toolName}: done` : `${m.toolName}: ${m.outcome.error}`
  if (m.role === 'assistant' && m.text === '' && m.toolCalls.length > 0) {
    return `(calling ${m.toolCalls.map((c) => c.name).join(', ')})`
  }
  return m.text
}
