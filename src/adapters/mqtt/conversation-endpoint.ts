import type { z } from 'zod'
import type { ConversationService } from '../../conversations/conversation-service.js'
import type { PhoneGrants } from '../../conversations/phone-grants.js'
import type { ApprovalEvent, TranscriptFeed } from '../../conversations/transcript-feed.js'
import { BoundedMap } from '../../core/bounded-map.js'
import type { StoredMessage } from '../../core/conversation.js'
import { type ErrorCode, errorText, isNocturnError, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { ApprovalEnding, ApprovalHistory } from '../../ports/approval-history.js'
import type { Clock } from '../../ports/clock.js'
import {
  type PhoneRequest as ConversationRequest,
  grantOpArgSchemas,
  phoneRequestMacInput,
  phoneRequestSchema,
} from '../../protocol/grant-ops.js'
import {
  DEFAULT_PREFIX,
  MAX_PAYLOAD_BYTES,
  opArgSchemas,
  type PhoneKeys,
  type PhoneRefusal,
  PhoneVerifier,
  PROTOCOL_VERSION,
  parseConversationRequestTopic,
  parsePayload,
  type ReplyKind,
  signConversationReply,
  type Topics,
  topicsFor,
} from '../../protocol/index.js'
import type { MqttConnection } from './connection.js'
import { RejectionLog } from './rejection-log.js'
import { chunkItems, splitText } from './reply-chunks.js'

export interface ConversationEndpointOptions {
  readonly connection: MqttConnection
  readonly service: ConversationService
  /** The grants a phone may list and revoke (docs/protocol.md "Grants"). */
  readonly grants: PhoneGrants
  /** Every approval's ending, for `history` (docs/protocol.md "History"); absent: not kept. */
  readonly history?: ApprovalHistory
  /**
   * The store as a feed, for the live view (messages, and approvals when the gate's approver is
   * wrapped with `announcingApprover`); `delete` also vacuums through it.
   */
  readonly feed: TranscriptFeed
  readonly phones: PhoneKeys
  readonly deviceId: string
  readonly prefix?: string
  readonly logger: Logger
  /** Wall-clock time (requests carry wall-clock `at`, follows end at a time) and timers. */
  readonly clock: Clock
  /** How far a phone's clock may be off. */
  readonly skewMs?: number
  /** How many nonces are remembered. */
  readonly remember?: number
}

export type ConversationRejectReason =
  | 'oversized'
  | 'malformed-json'
  | 'invalid-payload'
  | 'phone-mismatch'
  | 'wrong-device'
  | PhoneRefusal

export interface ConversationEndpoint {
  /** Resolves once subscribed to the request topics. */
  ready(): Promise<void>
  /** Why requests were refused, counted. */
  readonly rejected: ReadonlyMap<ConversationRejectReason, number>
  /** Stops following, aborts typed turns still running, ignores further requests. */
  close(): void
}

/** Replies stay well under 16 KiB: the envelope (ids, MAC) takes the rest. */
const ITEMS_BUDGET = MAX_PAYLOAD_BYTES - 2048
/** The most text one `part`, or `done` of `say`, carries (as JSON); longer text is split. */
const TEXT_BUDGET = 8 * 1024
/** A phone may have this many typed turns running at once; more are refused, not queued. */
const MAX_SAYS_PER_PHONE = 2
const DEFAULT_FOLLOW_MS = 10 * 60_000
const MAX_FOLLOW_MS = 60 * 60_000

interface Follow {
  readonly re: string
  readonly target: string
  readonly until: number
  /** The follow's own answer counter: it may outlive any bounded memory of request ids. */
  n: number
}

/**
 * Conversations over MQTT (docs/protocol.md, "Conversations"): verifies each phone request like a
 * decision (paired phone, MAC, time window, fresh nonce), runs it on the ConversationService and
 * answers on that phone's own reply topic, never retained, every answer signed with its key.
 * Anything that does not verify is logged with the reason and gets no answer at all.
 */
export function createConversationEndpoint(
  options: ConversationEndpointOptions,
): ConversationEndpoint {
  return new Endpoint(options)
}

class Endpoint implements ConversationEndpoint {
  readonly rejected: ReadonlyMap<ConversationRejectReason, number>
  readonly #options: ConversationEndpointOptions
  readonly #topics: Topics
  readonly #log: Logger
  readonly #clock: Clock
  readonly #verifier: PhoneVerifier
  readonly #rejections: RejectionLog<ConversationRejectReason>
  /** Reply counters per request id: n of the next answer. Bounded like the nonces. */
  readonly #counters: BoundedMap<string, number>
  readonly #follows = new Map<string, Follow>()
  readonly #says = new Map<string, Set<AbortController>>()
  readonly #stopFeed: () => void
  readonly #stopApprovals: () => void
  #closed = false
  readonly #ready: Promise<void>

  constructor(options: ConversationEndpointOptions) {
    this.#options = options
    this.#topics = topicsFor(options.prefix ?? DEFAULT_PREFIX, options.deviceId)
    this.#log = options.logger.child({ component: 'mqtt-conversations', device: options.deviceId })
    this.#clock = options.clock
    this.#rejections = new RejectionLog(this.#log, 'conversation request rejected', options.clock)
    this.rejected = this.#rejections.counts
    this.#verifier = new PhoneVerifier({
      phones: options.phones,
      clock: options.clock,
      ...(options.remember !== undefined && { remember: options.remember }),
      ...(options.skewMs !== undefined && { skewMs: options.skewMs }),
    })
    this.#counters = new BoundedMap(options.remember ?? 4096)
    let resolveReady!: () => void
    this.#ready = new Promise((r) => {
      resolveReady = r
    })
    options.connection.onMessage((topic, payload) => {
      if (this.#closed) return
      const phone = parseConversationRequestTopic(this.#topics, topic)
      if (phone !== undefined) this.#onRequest(phone, payload)
    })
    options.connection.onConnect(() => {
      options.connection.subscribe([this.#topics.conversationRequests]).then(
        () => {
          // From here a phone's request is heard (`nocturn_running` says nothing about the broker).
          this.#log.info({ event: 'conversations_subscribed' }, 'conversation requests subscribed')
          resolveReady()
        },
        (err) =>
          this.#log.error({ err: errorText(err) }, 'cannot subscribe to conversation requests'),
      )
    })
    this.#stopFeed = options.feed.subscribe((m) => this.#onStored(m))
    this.#stopApprovals = options.feed.subscribeApprovals((e) => this.#onApproval(e))
  }

  ready(): Promise<void> {
    return this.#ready
  }

  close(): void {
    this.#closed = true
    this.#stopFeed()
    this.#stopApprovals()
    this.#follows.clear()
    for (const set of this.#says.values()) for (const c of set) c.abort()
    this.#says.clear()
    this.#rejections.flush()
  }

  /** Counted always; logged in full only for the first few per reason, then in summaries. */
  #reject(reason: ConversationRejectReason, fields: Record<string, unknown>): void {
    this.#rejections.add(reason, { event: 'conversation_request_rejected', ...fields })
  }

  #onRequest(topicPhone: string, payload: Buffer): void {
    const v = this.#verify(topicPhone, payload)
    if ('reason' in v) {
      this.#reject(v.reason, v.fields)
      return
    }
    const { r, key } = v
    this.#log.info({ requestId: r.id, phone: r.phone, op: r.op }, 'conversation request accepted')
    try {
      this.#dispatch(r, key)
    } catch (err) {
      this.#refuse(r, key, err)
    }
  }

  /** The checks of docs/protocol.md, in order; the first that fails is the reason. */
  #verify(
    topicPhone: string,
    payload: Buffer,
  ):
    | { r: ConversationRequest; key: Uint8Array }
    | { reason: ConversationRejectReason; fields: Record<string, unknown> } {
    const parsed = parsePayload(phoneRequestSchema, payload)
    if (!parsed.ok) {
      const fields = { topicPhone, bytes: payload.length, detail: parsed.detail }
      return { reason: parsed.reason, fields }
    }
    const r = parsed.value
    const fields = { requestId: r.id, phone: r.phone, op: r.op }
    if (r.phone !== topicPhone)
      return { reason: 'phone-mismatch', fields: { ...fields, topicPhone } }
    if (r.device !== this.#options.deviceId) {
      return { reason: 'wrong-device', fields: { ...fields, device: r.device } }
    }
    // The args as received: the MAC covers them exactly, unknown fields included.
    const verdict = this.#verifier.verify(r, phoneRequestMacInput(r))
    if (!verdict.ok) return { reason: verdict.reason, fields: { ...fields, ...verdict.fields } }
    return { r, key: verdict.key }
  }

  #dispatch(r: ConversationRequest, key: Uint8Array): void {
    const { service } = this.#options
    switch (r.op) {
      case 'list': {
        const a = args(opArgSchemas.list, r.args)
        const page = service.listPage({
          ...(a.limit !== undefined && { limit: a.limit }),
          ...(a.before !== undefined && { before: a.before }),
          ...(a.beforeId !== undefined && { beforeId: a.beforeId }),
        })
        this.#sendItems(r, key, page.items, (c) => ({ id: c.id, truncated: true }))
        const oldest = page.items.at(-1)
        this.#reply(r.phone, key, r.id, 'done', {
          count: page.items.length,
          // Only when another page exists: a phone stops at the first answer without `next`.
          // `beforeId` too: conversations sharing `before` are split by id, none skipped.
          ...(page.more && oldest && { next: { before: oldest.updatedAt, beforeId: oldest.id } }),
        })
        return
      }
      case 'show': {
        const a = args(opArgSchemas.show, r.args)
        const { conversation, messages, more } = service.show({
          id: a.conversation,
          ...(a.afterSeq !== undefined && { afterSeq: a.afterSeq }),
          ...(a.limit !== undefined && { limit: a.limit }),
        })
        this.#sendItems(r, key, messages.map(wireMessage), shrinkMessage)
        const last = messages.at(-1)
        this.#reply(r.phone, key, r.id, 'done', {
          conversation: conversation.id,
          info: service.info(conversation.id),
          count: messages.length,
          ...(more && last && { next: { afterSeq: last.seq } }),
        })
        return
      }
      case 'say':
        this.#say(r, key, args(opArgSchemas.say, r.args))
        return
      case 'delete': {
        const a = args(opArgSchemas.delete, r.args)
        service.delete(a.conversation)
        // The words must leave the file too, not only the index.
        this.#options.feed.vacuum()
        this.#reply(r.phone, key, r.id, 'done', { deleted: a.conversation })
        return
      }
      case 'follow': {
        const a = args(opArgSchemas.follow, r.args)
        const forMs = a.forMs ?? DEFAULT_FOLLOW_MS
        if (!Number.isInteger(forMs) || forMs < 1 || forMs > MAX_FOLLOW_MS) {
          throw badRequest(`forMs: expected a whole number from 1 to ${MAX_FOLLOW_MS}`)
        }
        if (a.conversation !== '*') service.show({ id: a.conversation, limit: 1 })
        const until = this.#clock.now() + forMs
        // One follow per phone: a new one replaces the old (bounded by the number of paired phones).
        const follow: Follow = { re: r.id, target: a.conversation, until, n: 0 }
        this.#follows.set(r.phone, follow)
        this.#reply(r.phone, key, r.id, 'done', { following: a.conversation, until }, follow)
        return
      }
      case 'unfollow':
        this.#follows.delete(r.phone)
        this.#reply(r.phone, key, r.id, 'done', { following: null })
        return
      case 'grants': {
        args(grantOpArgSchemas.grants, r.args)
        const items = this.#options.grants.list()
        this.#sendItems(r, key, items, (g) => ({ ...g, args: undefined, truncated: true }))
        this.#reply(r.phone, key, r.id, 'done', { count: items.length })
        return
      }
      case 'history': {
        const a = args(grantOpArgSchemas.history, r.args)
        const history = this.#options.history
        if (!history) throw new NocturnError('NOC_ERR_NOT_FOUND', 'this speaker keeps no history')
        const limit = a.limit ?? 50
        if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
          throw badRequest('limit: expected a whole number from 1 to 200')
        }
        const items = history.list({
          limit: limit + 1,
          ...(a.before !== undefined && { before: a.before }),
          ...(a.beforeId !== undefined && { beforeId: a.beforeId }),
        })
        const page = items.slice(0, limit)
        this.#sendItems(r, key, page.map(wireEnding), (e) => ({
          ...e,
          args: undefined,
          truncated: true,
        }))
        const oldest = page.at(-1)
        this.#reply(r.phone, key, r.id, 'done', {
          count: page.length,
          ...(items.length > limit &&
            oldest && { next: { before: oldest.endedAt, beforeId: oldest.id } }),
        })
        return
      }
      case 'revoke': {
        const a = args(grantOpArgSchemas.revoke, r.args)
        this.#options.grants.revoke(a.grant, r.phone)
        this.#reply(r.phone, key, r.id, 'done', { revoked: a.grant })
        return
      }
    }
  }

  #say(r: ConversationRequest, key: Uint8Array, a: { conversation: string; text: string }): void {
    const running = this.#says.get(r.phone) ?? new Set<AbortController>()
    if (running.size >= MAX_SAYS_PER_PHONE) {
      throw badRequest('too many typed messages at once from this phone; wait for an answer')
    }
    const abort = new AbortController()
    running.add(abort)
    this.#says.set(r.phone, running)
    this.#options.service
      .say({
        conversationId: a.conversation,
        text: a.text,
        phone: r.phone,
        signal: abort.signal,
        onText: (delta) => {
          for (const text of splitText(delta, TEXT_BUDGET)) {
            this.#reply(r.phone, key, r.id, 'part', { text })
          }
        },
        onPending: (n) =>
          this.#reply(r.phone, key, r.id, 'pending', {
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
            for (const piece of pieces) this.#reply(r.phone, key, r.id, 'items', { items: [piece] })
          }
          this.#reply(r.phone, key, r.id, 'done', {
            conversation: result.conversationId,
            info,
            ...(pieces.length === 1 && { text: result.text }),
          })
        },
        (err: unknown) => this.#refuse(r, key, err),
      )
      .finally(() => {
        running.delete(abort)
        if (running.size === 0) this.#says.delete(r.phone)
      })
  }

  /** A verified request that cannot be done: the phone is told why; the reason is logged. */
  #refuse(r: ConversationRequest, key: Uint8Array, err: unknown): void {
    const known = isNocturnError(err)
    const code: ErrorCode = known ? err.code : 'NOC_ERR_INTERNAL'
    const message = known ? err.message : 'Something went wrong on the speaker.'
    const fields = { requestId: r.id, phone: r.phone, op: r.op, code }
    if (known) this.#log.info(fields, 'conversation request refused')
    else this.#log.error({ ...fields, err: errorText(err) }, 'conversation request failed')
    this.#reply(r.phone, key, r.id, 'error', { code, message })
  }

  #sendItems<T>(
    r: ConversationRequest,
    key: Uint8Array,
    items: readonly T[],
    shrink: (item: T) => unknown,
  ): void {
    for (const chunk of chunkItems(items, ITEMS_BUDGET, shrink)) {
      this.#reply(r.phone, key, r.id, 'items', { items: chunk })
    }
  }

  #reply(
    phone: string,
    key: Uint8Array,
    re: string,
    kind: ReplyKind,
    body: unknown,
    follow?: Follow,
  ): void {
    if (this.#closed) return
    let n: number
    if (follow) n = follow.n++
    else {
      n = this.#counters.get(re) ?? 0
      this.#counters.set(re, n + 1)
    }
    const reply: Record<string, unknown> = {
      v: PROTOCOL_VERSION,
      re,
      device: this.#options.deviceId,
      phone,
      n,
      kind,
      body,
      at: this.#clock.now(),
    }
    // The MAC field adds 73 bytes.
    const bytes = Buffer.byteLength(JSON.stringify(reply)) + 80
    if (bytes > MAX_PAYLOAD_BYTES) {
      // Every path above stays within budget; this is the last guard, so a phone never sees a gap.
      this.#log.error({ phone, requestId: re, kind, bytes }, 'reply too large: sent truncated')
      reply.body = { truncated: true }
    }
    reply.mac = signConversationReply(key, JSON.parse(JSON.stringify(reply)))
    this.#options.connection
      .publish(this.#topics.conversationReply(phone), JSON.stringify(reply), { qos: 1 })
      .catch((err: unknown) =>
        this.#log.warn({ phone, requestId: re, kind, err: errorText(err) }, 'reply not published'),
      )
  }

  /** Every message the store keeps goes to each phone following its conversation. */
  #onStored(m: StoredMessage): void {
    if (this.#closed || this.#follows.size === 0) return
    this.#toFollowers(m.conversationId, 'message', {
      conversation: m.conversationId,
      message: wireMessage(m),
    })
  }

  #onApproval(e: ApprovalEvent): void {
    if (this.#closed || this.#follows.size === 0) return
    const { conversationId, ...rest } = e
    this.#toFollowers(conversationId, 'approval', { conversation: conversationId, ...rest })
  }

  #toFollowers(conversation: string, kind: ReplyKind, body: unknown): void {
    const now = this.#clock.now()
    const keys = this.#options.phones()
    for (const [phone, f] of this.#follows) {
      const key = keys.get(phone)
      // A revoked phone or an ended follow hears nothing more.
      if (!key || now > f.until) {
        this.#follows.delete(phone)
        continue
      }
      if (f.target !== '*' && f.target !== conversation) continue
      const fits = Buffer.byteLength(JSON.stringify(body)) <= ITEMS_BUDGET
      this.#reply(phone, key, f.re, kind, fits ? body : shrinkEvent(body), f)
    }
  }
}

/** A stored message as the phone reads it: exactly what is stored, less the conversation id. */
function wireMessage(m: StoredMessage): Record<string, unknown> {
  const { conversationId: _c, ...rest } = m
  return rest
}

function shrinkMessage(m: Record<string, unknown>): unknown {
  return { seq: m.seq, role: m.role, channel: m.channel, at: m.at, truncated: true }
}

function shrinkEvent(body: unknown): unknown {
  const b = body as { conversation?: unknown; message?: Record<string, unknown> }
  return {
    conversation: b.conversation,
    ...(b.message && { message: shrinkMessage(b.message) }),
    truncated: true,
  }
}

/** An ending as a phone reads it: the protocol's field names (docs/protocol.md "History"). */
function wireEnding(e: ApprovalEnding): Record<string, unknown> {
  const { conversationId, ...rest } = e
  return { ...rest, ...(conversationId !== undefined && { conversation: conversationId }) }
}

function args<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value)
  if (!r.success) throw badRequest('args: not what this operation takes')
  return r.data
}

function badRequest(message: string): NocturnError {
  return new NocturnError('NOC_ERR_BAD_REQUEST', message)
}
