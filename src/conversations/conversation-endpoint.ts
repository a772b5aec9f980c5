import type { StoredMessage } from '../core/conversation.js'
import type { Clock } from '../ports/clock.js'
import {
  ITEMS_BUDGET,
  type PhoneAsk,
  type PhoneRequestChannel,
  type ReplyCounter,
} from '../ports/phone-requests.js'
import { opArgSchemas, type ReplyKind } from '../protocol/index.js'
import { args, badRequest } from '../protocol/op-args.js'
import { splitText } from '../protocol/reply-chunks.js'
import type { ConversationService } from './conversation-service.js'
import type { ApprovalEvent, TranscriptFeed } from './transcript-feed.js'

export interface ConversationEndpointOptions {
  /** The phones' request channel this endpoint serves its operations on. */
  readonly requests: PhoneRequestChannel
  readonly service: ConversationService
  /**
   * The store as a feed, for the live view (messages, and approvals when the approval desk tells
   * it through `approvalAnnouncer`); `delete` also vacuums through it.
   */
  readonly feed: TranscriptFeed
  /** Wall-clock time (follows end at a time). */
  readonly clock: Clock
}

export interface ConversationEndpoint {
  /** Stops following, aborts typed turns still running, answers nothing more. */
  close(): void
}

/** The most text one `part`, or `done` of `say`, carries (as JSON); longer text is split. */
const TEXT_BUDGET = 8 * 1024
/** A phone may have this many typed turns running at once; more are refused, not queued. */
const MAX_SAYS_PER_PHONE = 2
const DEFAULT_FOLLOW_MS = 10 * 60_000
const MAX_FOLLOW_MS = 60 * 60_000

interface Follow extends ReplyCounter {
  readonly re: string
  readonly target: string
  readonly until: number
}

/** A typed turn running for a phone: the conversation it writes to, once known. */
interface Say {
  readonly abort: AbortController
  conversation: string | undefined
}

/**
 * Conversations over MQTT (docs/protocol.md, "Conversations"): list, read, continue by typing,
 * delete and follow, on the phones' request channel. A typed message's answer goes back one way,
 * as replies to its `say`: what that turn stores is not echoed again to the phone that typed it
 * through its follow (other phones following still see every stored message).
 */
export function createConversationEndpoint(
  options: ConversationEndpointOptions,
): ConversationEndpoint {
  return new Endpoint(options)
}

class Endpoint implements ConversationEndpoint {
  readonly #options: ConversationEndpointOptions
  readonly #requests: PhoneRequestChannel
  readonly #clock: Clock
  readonly #follows = new Map<string, Follow>()
  readonly #says = new Map<string, Set<Say>>()
  readonly #stopFeed: () => void
  readonly #stopApprovals: () => void
  #closed = false

  constructor(options: ConversationEndpointOptions) {
    this.#options = options
    this.#requests = options.requests
    this.#clock = options.clock
    const serve = (fn: (ask: PhoneAsk) => void) => (ask: PhoneAsk) => {
      if (!this.#closed) fn(ask)
    }
    this.#requests.serve({
      list: serve((ask) => this.#list(ask)),
      show: serve((ask) => this.#show(ask)),
      say: serve((ask) => this.#say(ask)),
      delete: serve((ask) => this.#delete(ask)),
      follow: serve((ask) => this.#follow(ask)),
      unfollow: serve((ask) => {
        this.#follows.delete(ask.request.phone)
        ask.reply('done', { following: null })
      }),
    })
    this.#stopFeed = options.feed.subscribe((m) => this.#onStored(m))
    this.#stopApprovals = options.feed.subscribeApprovals((e) => this.#onApproval(e))
  }

  close(): void {
    this.#closed = true
    this.#stopFeed()
    this.#stopApprovals()
    this.#follows.clear()
    for (const set of this.#says.values()) for (const s of set) s.abort.abort()
    this.#says.clear()
  }

  #list(ask: PhoneAsk): void {
    const a = args(opArgSchemas.list, ask.request.args)
    const page = this.#options.service.listPage({
      ...(a.limit !== undefined && { limit: a.limit }),
      ...(a.before !== undefined && { before: a.before }),
      ...(a.beforeId !== undefined && { beforeId: a.beforeId }),
    })
    // Only `last` can be long (a long answer): the rest, who typed it among them, stays on the list.
    ask.items(page.items, (c) => ({ ...c, last: null, truncated: true }))
    const oldest = page.items.at(-1)
    ask.reply('done', {
      count: page.items.length,
      // Only when another page exists: a phone stops at the first answer without `next`.
      // `beforeId` too: conversations sharing `before` are split by id, none skipped.
      ...(page.more && oldest && { next: { before: oldest.updatedAt, beforeId: oldest.id } }),
    })
  }

  #show(ask: PhoneAsk): void {
    const { service } = this.#options
    const a = args(opArgSchemas.show, ask.request.args)
    const { conversation, messages, more } = service.show({
      id: a.conversation,
      ...(a.afterSeq !== undefined && { afterSeq: a.afterSeq }),
      ...(a.limit !== undefined && { limit: a.limit }),
    })
    ask.items(messages.map(wireMessage), shrinkMessage)
    const last = messages.at(-1)
    ask.reply('done', {
      conversation: conversation.id,
      info: service.info(conversation.id),
      count: messages.length,
      ...(more && last && { next: { afterSeq: last.seq } }),
    })
  }

  #delete(ask: PhoneAsk): void {
    const a = args(opArgSchemas.delete, ask.request.args)
    this.#options.service.delete(a.conversation)
    // The words must leave the file too, not only the index.
    this.#options.feed.vacuum()
    ask.reply('done', { deleted: a.conversation })
  }

  #follow(ask: PhoneAsk): void {
    const r = ask.request
    const a = args(opArgSchemas.follow, r.args)
    const forMs = a.forMs ?? DEFAULT_FOLLOW_MS
    if (!Number.isInteger(forMs) || forMs < 1 || forMs > MAX_FOLLOW_MS) {
      throw badRequest(`forMs: expected a whole number from 1 to ${MAX_FOLLOW_MS}`)
    }
    if (a.conversation !== '*') this.#options.service.show({ id: a.conversation, limit: 1 })
    const until = this.#clock.now() + forMs
    // One follow per phone: a new one replaces the old (bounded by the number of paired phones).
    const follow: Follow = { re: r.id, target: a.conversation, until, n: 0 }
    this.#follows.set(r.phone, follow)
    ask.reply('done', { following: a.conversation, until }, follow)
  }

  #say(ask: PhoneAsk): void {
    const r = ask.request
    const a = args(opArgSchemas.say, r.args)
    const running = this.#says.get(r.phone) ?? new Set<Say>()
    if (running.size >= MAX_SAYS_PER_PHONE) {
      throw badRequest('too many typed messages at once from this phone; wait for an answer')
    }
    const say: Say = { abort: new AbortController(), conversation: undefined }
    running.add(say)
    this.#says.set(r.phone, running)
    const reply = (kind: ReplyKind, body: unknown) => {
      if (!this.#closed) ask.reply(kind, body)
    }
    this.#options.service
      .say({
        conversationId: a.conversation,
        text: a.text,
        phone: r.phone,
        signal: say.abort.signal,
        onConversation: (id) => {
          say.conversation = id
        },
        onText: (delta) => {
          for (const text of splitText(delta, TEXT_BUDGET)) reply('part', { text })
        },
        onPending: (n) =>
          reply('pending', {
            approvalId: n.approvalId,
            audience: n.audience,
            tool: n.tool,
            action: n.action,
          }),
      })
      .then(
        (result) => {
          const info = this.#options.service.info(result.conversationId)
          const pieces = splitText(result.text, TEXT_BUDGET)
          // A long answer goes first as pieces in `items`; `done` then carries no text.
          if (pieces.length > 1) {
            for (const piece of pieces) reply('items', { items: [piece] })
          }
          reply('done', {
            conversation: result.conversationId,
            info,
            ...(pieces.length === 1 && { text: result.text }),
          })
        },
        (err: unknown) => {
          if (!this.#closed) ask.refuse(err)
        },
      )
      .finally(() => {
        running.delete(say)
        if (running.size === 0) this.#says.delete(r.phone)
      })
  }

  /** Whether `phone` has a typed turn running in `conversation`: its answer goes back as replies. */
  #saying(phone: string, conversation: string): boolean {
    for (const s of this.#says.get(phone) ?? []) if (s.conversation === conversation) return true
    return false
  }

  /**
   * Every message the store keeps goes to each phone following its conversation, but the one whose
   * own typed turn wrote it: that phone has it as the turn's replies, and reads the stored rows with
   * `show` once the turn is done (docs/protocol.md, "Your own typed turn", and its follow-vector).
   */
  #onStored(m: StoredMessage): void {
    if (this.#closed || this.#follows.size === 0) return
    const body = { conversation: m.conversationId, message: wireMessage(m) }
    this.#toFollowers(m.conversationId, 'message', body, (phone) =>
      this.#saying(phone, m.conversationId),
    )
  }

  #onApproval(e: ApprovalEvent): void {
    if (this.#closed || this.#follows.size === 0) return
    const { conversationId, ...rest } = e
    this.#toFollowers(conversationId, 'approval', { conversation: conversationId, ...rest })
  }

  #toFollowers(
    conversation: string,
    kind: ReplyKind,
    body: unknown,
    skip: (phone: string) => boolean = () => false,
  ): void {
    const now = this.#clock.now()
    const keys = this.#requests.phones()
    for (const [phone, f] of this.#follows) {
      const key = keys.get(phone)
      // A revoked phone or an ended follow hears nothing more.
      if (!key || now > f.until) {
        this.#follows.delete(phone)
        continue
      }
      if ((f.target !== '*' && f.target !== conversation) || skip(phone)) continue
      const fits = Buffer.byteLength(JSON.stringify(body)) <= ITEMS_BUDGET
      this.#requests.reply({ phone, key, re: f.re }, kind, fits ? body : shrinkEvent(body), f)
    }
  }
}

/** A stored message as the phone reads it: exactly what is stored, less the conversation id. */
function wireMessage(m: StoredMessage): Record<string, unknown> {
  const { conversationId: _c, ...rest } = m
  return rest
}

function shrinkMessage(m: Record<string, unknown>): unknown {
  // Who typed it survives the cut: the phone still says who said what.
  return {
    seq: m.seq,
    role: m.role,
    channel: m.channel,
    at: m.at,
    ...(typeof m.by === 'string' && { by: m.by }),
    truncated: true,
  }
}

function shrinkEvent(body: unknown): unknown {
  const b = body as { conversation?: unknown; message?: Record<string, unknown> }
  return {
    conversation: b.conversation,
    ...(b.message && { message: shrinkMessage(b.message) }),
    truncated: true,
  }
}
