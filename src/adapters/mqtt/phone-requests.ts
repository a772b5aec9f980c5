import { BoundedMap } from '../../core/bounded-map.js'
import { type ErrorCode, errorText, isNocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import {
  ITEMS_BUDGET,
  type OpHandler,
  type PhoneAsk,
  type PhoneRequestChannel,
  type ReplyCounter,
  type ReplyTo,
} from '../../ports/phone-requests.js'
import {
  type PhoneOp,
  type PhoneRequest,
  phoneRequestMacInput,
  phoneRequestSchema,
} from '../../protocol/grant-ops.js'
import {
  DEFAULT_PREFIX,
  type PhoneKeys,
  type PhoneRefusal,
  PhoneVerifier,
  parseConversationRequestTopic,
  parsePayload,
  type ReplyKind,
  type Topics,
  topicsFor,
} from '../../protocol/index.js'
import { badRequest } from '../../protocol/op-args.js'
import { chunkItems } from '../../protocol/reply-chunks.js'
import type { MqttConnection } from './connection.js'
import { RejectionLog } from './rejection-log.js'
import { sendReply } from './signed-reply.js'

export interface PhoneRequestsOptions {
  readonly connection: MqttConnection
  readonly phones: PhoneKeys
  readonly deviceId: string
  readonly prefix?: string
  readonly logger: Logger
  /** Wall-clock time: requests carry wall-clock `at`, replies too. */
  readonly clock: Clock
  /** How far a phone's clock may be off. */
  readonly skewMs?: number
  /** How many nonces are remembered. */
  readonly remember?: number
  /** Each refused request's reason, after it was logged (the device's state counts them). */
  readonly onRefused?: (reason: ConversationRejectReason) => void
}

export type ConversationRejectReason =
  | 'oversized'
  | 'malformed-json'
  | 'invalid-payload'
  | 'phone-mismatch'
  | 'wrong-device'
  | PhoneRefusal

/**
 * The phones' request channel over MQTT (docs/protocol.md, "Conversations" and "Grants"): verifies
 * each phone request like a decision (paired phone, MAC, time window, fresh nonce) and hands it to
 * the endpoint serving its operation; answers go on that phone's own reply topic, never retained,
 * every answer signed with its key. Anything that does not verify is logged with the reason and
 * gets no answer at all.
 */
export class PhoneRequests implements PhoneRequestChannel {
  readonly phones: PhoneKeys
  readonly #options: PhoneRequestsOptions
  readonly #topics: Topics
  readonly #log: Logger
  readonly #clock: Clock
  readonly #verifier: PhoneVerifier
  readonly #rejections: RejectionLog<ConversationRejectReason>
  /** Reply counters per request id: n of the next answer. Bounded like the nonces. */
  readonly #counters: BoundedMap<string, number>
  readonly #ops = new Map<PhoneOp, OpHandler>()
  readonly #ready: Promise<void>
  #closed = false

  constructor(options: PhoneRequestsOptions) {
    this.#options = options
    this.phones = options.phones
    this.#topics = topicsFor(options.prefix ?? DEFAULT_PREFIX, options.deviceId)
    this.#log = options.logger.child({ component: 'mqtt-conversations', device: options.deviceId })
    this.#clock = options.clock
    this.#rejections = new RejectionLog(this.#log, 'conversation request rejected', options.clock, {
      ...(options.onRefused && { counted: options.onRefused }),
    })
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
          this.#log.error(
            { event: 'conversations_subscribe_failed', err: errorText(err) },
            'cannot subscribe to conversation requests',
          ),
      )
    })
  }

  /** Resolves once subscribed to the request topics. */
  ready(): Promise<void> {
    return this.#ready
  }

  /** An endpoint's operations: each op is served by one endpoint. */
  serve(ops: Partial<Record<PhoneOp, OpHandler>>): void {
    for (const [op, handler] of Object.entries(ops) as [PhoneOp, OpHandler][]) {
      if (this.#ops.has(op)) throw new Error(`phone op "${op}" is served twice`)
      this.#ops.set(op, handler)
    }
  }

  /** Ignores further requests and sends nothing more. */
  close(): void {
    this.#closed = true
    this.#rejections.flush()
  }

  /** One signed answer on the phone's reply topic, numbered by its request or by `counter`. */
  reply(to: ReplyTo, kind: ReplyKind, body: unknown, counter?: ReplyCounter): void {
    if (this.#closed) return
    const { re } = to
    let n: number
    if (counter) n = counter.n++
    else {
      n = this.#counters.get(re) ?? 0
      this.#counters.set(re, n + 1)
    }
    sendReply(
      {
        connection: this.#options.connection,
        topics: this.#topics,
        deviceId: this.#options.deviceId,
        clock: this.#clock,
        logger: this.#log,
      },
      to,
      n,
      kind,
      body,
    )
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
    const ask = this.#ask(r, { phone: r.phone, key, re: r.id })
    try {
      const handler = this.#ops.get(r.op)
      if (!handler) throw badRequest(`op: "${r.op}" is not served by this device`)
      handler(ask)
    } catch (err) {
      ask.refuse(err)
    }
  }

  #ask(request: PhoneRequest, to: ReplyTo): PhoneAsk {
    return {
      request,
      to,
      reply: (kind, body, counter) => this.reply(to, kind, body, counter),
      items: (items, shrink) => {
        for (const chunk of chunkItems(items, ITEMS_BUDGET, shrink)) {
          this.reply(to, 'items', { items: chunk })
        }
      },
      refuse: (err) => {
        const known = isNocturnError(err)
        const code: ErrorCode = known ? err.code : 'NOC_ERR_INTERNAL'
        const message = known ? err.message : 'Something went wrong on the speaker.'
        const fields = { requestId: request.id, phone: request.phone, op: request.op, code }
        if (known) this.#log.info(fields, 'conversation request refused')
        else {
          this.#log.error(
            { event: 'conversation_request_failed', ...fields, err: errorText(err) },
            'conversation request failed',
          )
        }
        this.reply(to, 'error', { code, message })
      },
    }
  }

  /** The checks of docs/protocol.md, in order; the first that fails is the reason. */
  #verify(
    topicPhone: string,
    payload: Buffer,
  ):
    | { r: PhoneRequest; key: Uint8Array }
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
}

/** A request's args as its operation takes them, or a bad request. */
