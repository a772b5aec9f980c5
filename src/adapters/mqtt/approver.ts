import { raceAbort } from '../../core/abort.js'
import { BoundedMap } from '../../core/bounded-map.js'
import { errorText, isNocturnError, NocturnError } from '../../core/errors.js'
import { rememberedGrant } from '../../core/grants.js'
import type { Logger } from '../../core/logger.js'
import type { ApprovalBroadcast } from '../../ports/approval-broadcast.js'
import type { ApprovalDecision, ApprovalRequest, Approver } from '../../ports/approver.js'
import type { Clock } from '../../ports/clock.js'
import type { OwnerCheck, OwnerRefusal } from '../../ports/owner-check.js'
import {
  DEFAULT_PREFIX,
  type DecisionMessage,
  decisionMacInput,
  decisionSchema,
  type Grant,
  MAX_PAYLOAD_BYTES,
  type OutcomeMessage,
  type PhoneKeys,
  type PhoneRefusal,
  PhoneVerifier,
  PROTOCOL_VERSION,
  parseApprovalTopic,
  parsePayload,
  type RequestBody,
  requestDigest,
  saidForRequest,
  signOutcome,
  signRequest,
  type Topics,
  topicsFor,
} from '../../protocol/index.js'
import { type OutcomeState, OWNER_REFUSED_CODE } from '../../protocol/phone-side.js'
import { type MqttConnection, PublishRefused } from './connection.js'
import { RejectionLog } from './rejection-log.js'
import { sendReply } from './signed-reply.js'

export type { PhoneKeys } from '../../protocol/index.js'

export interface MqttApproverOptions {
  readonly connection: MqttConnection
  readonly deviceId: string
  readonly prefix?: string
  readonly phones: PhoneKeys
  readonly logger: Logger
  /** What the model says it is waiting for, e.g. "your phone". */
  readonly audience?: string
  /** Wall-clock time (decisions carry wall-clock `at`) and the rejection log's timer. */
  readonly clock: Clock
  /** How far a phone's clock may be off. */
  readonly skewMs?: number
  /** How many nonces and settled ids are remembered (bounds memory under a flood). */
  readonly remember?: number
  /**
   * Whether the phone that typed a message may approve the call it led to: `non-critical`
   * (default) lets it for ordinary tools but a critical tool needs another paired phone's yes;
   * `any` lets it for every tool (a one-phone household), always as its own explicit decision;
   * `never` always needs another phone. A "no" from the asking phone is always accepted.
   */
  readonly selfApproval?: SelfApproval
  /**
   * Told each request exactly as published and each ending exactly as announced, to reach phones
   * that are not on the broker (Web Push, alert channels); it never holds an approval up.
   */
  readonly broadcast?: ApprovalBroadcast
  /** Each refused decision's reason, after it was logged (the device's state counts them). */
  readonly onRefused?: (reason: RejectReason) => void
  /**
   * The owner's yes (docs/protocol.md, "The owner's yes"): asked for every critical approve, which
   * counts only with a valid, user-verified assertion from a phone that registered a credential.
   * Absent: no phone can have registered one, and a critical yes is taken as before.
   */
  readonly owner?: OwnerCheck
}

export type SelfApproval = 'non-critical' | 'any' | 'never'

/** Whether `phone` may approve `request` under `rule`. */
export function maySelfApprove(
  rule: SelfApproval,
  request: Pick<ApprovalRequest, 'askedBy' | 'critical'>,
  phone: string,
): boolean {
  if (request.askedBy === undefined || request.askedBy !== phone) return true
  if (rule === 'any') return true
  if (rule === 'never') return false
  return !request.critical
}

export type RejectReason =
  | 'oversized'
  | 'malformed-json'
  | 'invalid-payload'
  | 'id-mismatch'
  | 'unknown-request'
  | 'already-settled'
  | 'withdrawn'
  | 'expired'
  | PhoneRefusal
  | 'self-approval'
  | OwnerRefusal
  | 'invalid-topic'

interface Pending {
  readonly request: ApprovalRequest
  readonly digest: string
  readonly payload: string
  /** Refused yeses a phone was told of: `n` of the next such answer. */
  refusalsTold: number
  resolve(d: ApprovalDecision): void
  reject(e: Error): void
  cleanup(): void
}

const SAY_UNREACHABLE = "I can't reach your phone right now"

/** What the phone is told when its yes failed the owner's check (docs/protocol.md). */
const OWNER_REFUSAL_TEXT: Record<OwnerRefusal, string> = {
  'no-credential': 'this phone has no screen-lock key registered with the speaker',
  'no-assertion': 'the yes came without the screen-lock check',
  'unknown-credential': 'the speaker knows another screen-lock key for this phone',
  'not-user-verified': 'the screen lock was not used',
  'invalid-assertion': 'the screen-lock check did not verify for this request',
}

/**
 * The Approver over MQTT (protocol v1, docs/protocol.md): each request is published retained,
 * signed for every paired phone; the first decision that verifies wins; every ending clears the
 * retained request and publishes an outcome. While the broker is away new requests fail at once;
 * pending ones keep their deadline and are re-published on reconnect.
 */
export class MqttApprover implements Approver {
  readonly audience: string
  readonly topics: Topics
  readonly #options: MqttApproverOptions
  readonly #conn: MqttConnection
  readonly #log: Logger
  readonly #clock: Clock
  readonly #pending = new Map<string, Pending>()
  /** How each recent approval ended, and the digest its outcome was signed over. */
  readonly #settled: BoundedMap<string, OutcomeState>
  readonly #verifier: PhoneVerifier
  /** Endings that happened while disconnected: cleared and announced on reconnect. */
  readonly #owed = new BoundedMap<string, OutcomeMessage>(1024)
  #subscribed = false
  #everReady = false
  #ready: Promise<void>
  #resolveReady!: () => void
  readonly #rejections: RejectionLog<RejectReason>

  constructor(options: MqttApproverOptions) {
    this.#options = options
    this.#conn = options.connection
    this.audience = options.audience ?? 'your phone'
    this.topics = topicsFor(options.prefix ?? DEFAULT_PREFIX, options.deviceId)
    this.#log = options.logger.child({ component: 'mqtt-approver', device: options.deviceId })
    this.#clock = options.clock
    this.#rejections = new RejectionLog(this.#log, 'decision rejected', options.clock, {
      ...(options.onRefused && { counted: options.onRefused }),
    })
    const remember = options.remember ?? 4096
    this.#settled = new BoundedMap(remember)
    this.#verifier = new PhoneVerifier({
      phones: options.phones,
      clock: options.clock,
      remember,
      ...(options.skewMs !== undefined && { skewMs: options.skewMs }),
    })
    this.#ready = new Promise((resolve) => {
      this.#resolveReady = resolve
    })
    this.#conn.onMessage((topic, payload, retained) => this.#onMessage(topic, payload, retained))
    this.#conn.onDisconnect(() => {
      this.#subscribed = false
    })
    this.#conn.onConnect(() => void this.#onConnect())
  }

  /** Resolves once subscribed for the first time (leftovers from a previous run arrive next). */
  ready(): Promise<void> {
    return this.#ready
  }

  #reachable(): boolean {
    return this.#conn.connected && this.#subscribed
  }

  /**
   * The device listens before its first broker connection is made (start-up is quicker so), and
   * that connection is being made, not lost: a request then waits for it rather than being refused
   * — bounded by the connect timeout, and by the gate's deadline through `signal`.
   */
  #firstConnectionUnderWay(): boolean {
    return !this.#everReady && (this.#conn.firstAttemptPending || this.#conn.connected)
  }

  async #afterFirstConnection(
    request: ApprovalRequest,
    signal: AbortSignal,
    log: Logger,
  ): Promise<ApprovalDecision> {
    log.info({ event: 'approval_awaits_broker' }, 'approval waits for the first broker connection')
    // Subscribed, or the first attempt failed (then the request is refused as unreachable).
    const attempt = this.#conn
      .firstAttempt()
      .then(() => (this.#conn.connected ? this.#ready : undefined))
    await raceAbort(Promise.race([this.#ready, attempt]), signal)
    return this.request(request, signal)
  }

  unavailable(): string | undefined {
    if (!this.#reachable() && !this.#firstConnectionUnderWay())
      return 'the MQTT broker is unreachable'
    if (this.#options.phones().size === 0) return 'no phone is paired with this speaker'
    return undefined
  }

  request(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    const log = this.#log.child({ approvalId: request.id })
    if (signal.aborted) return Promise.reject(new NocturnError('NOC_ERR_CANCELLED', 'withdrawn'))
    if (!this.#reachable()) {
      if (this.#firstConnectionUnderWay()) return this.#afterFirstConnection(request, signal, log)
      log.warn({ event: 'approval_refused_unreachable' }, 'approval refused: broker unreachable')
      return Promise.reject(new NocturnError('NOC_ERR_APPROVER_UNREACHABLE', SAY_UNREACHABLE))
    }
    const phones = this.#options.phones()
    if (phones.size === 0) {
      log.warn({ event: 'approval_refused_no_phone' }, 'approval refused: no phone is paired')
      return Promise.reject(
        new NocturnError('NOC_ERR_APPROVER_UNREACHABLE', 'no phone is paired with this speaker'),
      )
    }
    if (this.#pending.has(request.id)) {
      return Promise.reject(new Error(`approval ${request.id} is already pending`))
    }
    const said = saidForRequest(request.said)
    const body: RequestBody = {
      v: PROTOCOL_VERSION,
      id: request.id,
      device: this.#options.deviceId,
      tool: request.tool,
      action: request.action,
      args: request.args,
      critical: request.critical,
      channel: request.channel,
      // Asked outside any conversation (a timer, an automation): the field is left out.
      ...(request.conversationId !== '' && { conversation: request.conversationId }),
      ...(request.askedBy !== undefined && { askedBy: request.askedBy }),
      // The words that led to the call, cut short; in the digest, so no one can change them.
      ...(said !== undefined && { said }),
      // What a yes acts on, by id: signed with the rest.
      ...(request.targets !== undefined && { targets: request.targets }),
      createdAt: request.createdAt,
      expiresAt: request.expiresAt,
    }
    const digest = requestDigest(body)
    const macs: Record<string, string> = {}
    for (const [phone, key] of phones) macs[phone] = signRequest(key, digest)
    const payload = JSON.stringify({ ...body, digest, macs })
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      log.warn(
        { event: 'approval_refused_too_large', bytes: Buffer.byteLength(payload) },
        'approval refused: request too large',
      )
      return Promise.reject(
        new NocturnError('NOC_ERR_APPROVER_UNREACHABLE', 'the request is too large to send'),
      )
    }
    return new Promise<ApprovalDecision>((resolve, reject) => {
      // The approval timeout runs once, in the gate (core/gate.ts): it is the gate's rule that no
      // answer in time is a no, for every approver, on the injected clock. The gate aborts at
      // `expiresAt` saying it timed out; this only tells the phones how the request ended.
      const onAbort = () => {
        const expired = timedOut(signal.reason) || this.#clock.now() >= request.expiresAt
        const state: OutcomeState = expired ? 'expired' : 'withdrawn'
        log.info({ state }, 'approval ended without a decision')
        this.#settle(request.id, state)
        reject(
          expired
            ? new NocturnError('NOC_ERR_APPROVAL_TIMEOUT', 'nobody answered in time')
            : new NocturnError('NOC_ERR_CANCELLED', 'approval withdrawn'),
        )
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.#pending.set(request.id, {
        request,
        digest,
        payload,
        refusalsTold: 0,
        resolve,
        reject,
        cleanup: () => signal.removeEventListener('abort', onAbort),
      })
      log.info({ phones: phones.size, expiresAt: request.expiresAt }, 'approval requested')
      this.#publishRequest(request.id, payload)
      this.#tell((b) =>
        b.requested({
          request,
          topic: this.topics.request(request.id),
          message: payload,
          phones: [...phones.keys()],
        }),
      )
    })
  }

  #publishRequest(id: string, payload: string): void {
    this.#conn
      .publish(this.topics.request(id), payload, { retain: true, qos: 1 })
      .catch((err: unknown) => {
        if (err instanceof PublishRefused) {
          // The broker's ACL forbids our own request topic: no phone can ever see it, so waiting
          // for the timeout would only keep the room waiting. Fail it now, and say why.
          this.#log.error(
            {
              event: 'approval_request_refused',
              approvalId: id,
              topic: err.topic,
              reasonCode: err.reasonCode,
              err: errorText(err),
            },
            'approval request refused by the broker; the approval fails (check the ACL: nocturn doctor)',
          )
          const p = this.#pending.get(id)
          if (!p) return
          p.cleanup()
          this.#pending.delete(id)
          this.#settled.set(id, 'withdrawn')
          p.reject(err)
          return
        }
        // The request stays pending: it is re-published when the broker is back.
        this.#log.warn(
          { event: 'approval_request_not_published', approvalId: id, err: errorText(err) },
          'approval request not published',
        )
      })
  }

  /** Ends an approval: forget it, clear the retained request, announce the signed outcome. */
  #settle(id: string, state: OutcomeState, by?: string, grant?: Grant): void {
    const p = this.#pending.get(id)
    if (!p) return
    p.cleanup()
    this.#pending.delete(id)
    this.#settled.set(id, state)
    const outcome = this.#outcome(id, state, p.digest, by, grant)
    this.#announce(outcome)
    this.#tell((b) =>
      b.ended({
        id,
        state,
        topic: this.topics.outcome(id),
        message: JSON.stringify(outcome),
        phones: Object.keys(outcome.macs ?? {}),
      }),
    )
  }

  /** The broadcast is told after the fact; whatever it throws stays with it. */
  #tell(f: (b: ApprovalBroadcast) => void): void {
    const b = this.#options.broadcast
    if (!b) return
    try {
      f(b)
    } catch (err) {
      this.#log.error(
        { event: 'approval_broadcast_failed', err: errorText(err) },
        'approval broadcast failed',
      )
    }
  }

  /** An outcome signed for every phone paired now, over the digest of the request it ends. */
  #outcome(
    id: string,
    state: OutcomeState,
    digest: string,
    by?: string,
    grant?: Grant,
  ): OutcomeMessage {
    const at = this.#clock.now()
    const macs: Record<string, string> = {}
    for (const [phone, key] of this.#options.phones()) {
      macs[phone] = signOutcome(key, { id, state, by, grant, at, digest })
    }
    return {
      v: PROTOCOL_VERSION,
      id,
      state,
      ...(by !== undefined && { by }),
      ...(grant !== undefined && { grant }),
      at,
      macs,
    }
  }

  #announce(outcome: OutcomeMessage): void {
    if (!this.#conn.connected) {
      this.#owed.set(outcome.id, outcome)
      return
    }
    const id = outcome.id
    Promise.all([
      this.#conn.publish(this.topics.request(id), '', { retain: true, qos: 1 }),
      this.#conn.publish(this.topics.outcome(id), JSON.stringify(outcome), { qos: 1 }),
    ]).catch(() => {
      this.#owed.set(id, outcome)
    })
  }

  async #onConnect(): Promise<void> {
    try {
      await this.#conn.subscribe([this.topics.requests, this.topics.decisions])
    } catch (err) {
      this.#log.error(
        { event: 'subscribe_approval_topics_failed', err: errorText(err) },
        'cannot subscribe to approval topics; approvals fail closed',
      )
      return
    }
    this.#subscribed = true
    // What is still pending goes back on the broker (it may have lost its retained messages).
    for (const [id, p] of this.#pending) this.#publishRequest(id, p.payload)
    const owed = this.#owed.drain()
    for (const outcome of owed) this.#announce(outcome)
    if (this.#pending.size + owed.length > 0) {
      this.#log.info({ pending: this.#pending.size, owed: owed.length }, 'approvals re-published')
    }
    this.#everReady = true
    this.#resolveReady()
  }

  #onMessage(topic: string, payload: Buffer, retained: boolean): void {
    const where = parseApprovalTopic(this.topics, topic)
    if (!where) {
      this.#onBadTopic(topic, payload, retained)
      return
    }
    if (where.kind === 'decision') this.#onDecision(where.id, payload)
    else if (where.kind === 'request') this.#onRequestTopic(where.id, payload, retained)
  }

  /**
   * A message under our approvals whose id is outside the id alphabet (`approvals/not json`, an
   * 80-character id): never ours, so a retained one is cleared and reported, a decision rejected.
   */
  #onBadTopic(topic: string, payload: Buffer, retained: boolean): void {
    const head = `${this.topics.base}/approvals/`
    if (!topic.startsWith(head)) return
    const rest = topic.slice(head.length).split('/')
    const shown = { topic: topic.slice(0, 200), bytes: payload.length }
    if (rest.length === 2 && rest[1] === 'decision') {
      this.#reject('invalid-topic', shown)
      return
    }
    if (rest.length !== 1 || payload.length === 0) return
    // Clearing is safe: no request of ours can live there (our ids always match the alphabet).
    this.#log.warn(
      { event: 'invalid_request_cleared', ...shown, retained },
      'request under an invalid id cleared',
    )
    this.#conn.publish(topic, '', { retain: true, qos: 1 }).catch(() => {})
  }

  /** What is on a request topic must be ours, or nothing. */
  #onRequestTopic(id: string, payload: Buffer, retained: boolean): void {
    const p = this.#pending.get(id)
    if (p) {
      if (payload.equals(Buffer.from(p.payload))) return
      this.#log.warn(
        { event: 'pending_request_republished', approvalId: id, bytes: payload.length },
        'pending request overwritten or cleared by another client; re-published',
      )
      this.#publishRequest(id, p.payload)
      return
    }
    if (payload.length === 0) return
    const known = this.#settled.get(id)
    if (retained && known === undefined) {
      // Left behind by a previous run (or planted): nobody can answer it any more. A phone that
      // showed it verified its digest, so the expiry is signed over the digest of what is there.
      this.#log.info({ approvalId: id }, 'leftover request cleared and reported expired')
      this.#settled.set(id, 'expired')
      this.#announce(this.#outcome(id, 'expired', leftoverDigest(payload)))
      return
    }
    if (known === undefined) {
      this.#log.warn(
        { event: 'foreign_request_cleared', approvalId: id },
        'request not published by this device cleared',
      )
    }
    // Our own echo arriving after the ending, or someone re-planting a settled request: clear it.
    this.#conn.publish(this.topics.request(id), '', { retain: true, qos: 1 }).catch(() => {})
  }

  /** Counted always; logged in full only for the first few per reason, then in summaries. */
  #reject(reason: RejectReason, fields: Record<string, unknown>): void {
    this.#rejections.add(reason, { event: 'decision_rejected', ...fields })
  }

  #onDecision(topicId: string, payload: Buffer): void {
    const parsed = parsePayload(decisionSchema, payload)
    if (!parsed.ok) {
      this.#reject(parsed.reason, {
        approvalId: topicId,
        bytes: payload.length,
        detail: parsed.detail,
      })
      return
    }
    const d: DecisionMessage = parsed.value
    const fields = { approvalId: topicId, phone: d.phone }
    if (d.id !== topicId) {
      this.#reject('id-mismatch', { ...fields, payloadId: d.id })
      return
    }
    const p = this.#pending.get(d.id)
    if (!p) {
      const ended = this.#settled.get(d.id)
      if (ended === 'withdrawn' || ended === 'expired') {
        this.#reject(ended, fields)
        return
      }
      if (ended) {
        this.#reject('already-settled', { ...fields, state: ended })
        return
      }
      this.#reject('unknown-request', fields)
      return
    }
    // Signed over the digest of the request as this device published it: the one the phone showed.
    const verdict = this.#verifier.verify(d, decisionMacInput({ ...d, digest: p.digest }), {
      from: p.request.createdAt,
      to: p.request.expiresAt,
    })
    if (!verdict.ok) {
      this.#reject(verdict.reason, { ...fields, ...verdict.fields })
      return
    }
    // Typing a request is never approving it: the asker's yes counts only where the rule allows,
    // and otherwise the request stays pending for another phone.
    const rule = this.#options.selfApproval ?? 'non-critical'
    if (d.decision === 'approve' && !maySelfApprove(rule, p.request, d.phone)) {
      this.#reject('self-approval', { ...fields, critical: p.request.critical, rule })
      return
    }
    const owner = this.#options.owner
    if (d.decision === 'approve' && p.request.critical && owner) {
      void this.#checkOwner(owner, d, p, fields)
      return
    }
    this.#accept(d, p, fields)
  }

  /**
   * A critical yes counts only with its owner's assertion. The check is asynchronous, so the
   * request may have ended meanwhile (another phone answered, it expired): then nothing is taken.
   */
  async #checkOwner(
    owner: OwnerCheck,
    d: DecisionMessage,
    p: Pending,
    fields: { approvalId: string; phone: string },
  ): Promise<void> {
    const verdict = await owner
      .checkYes(d.phone, d.owner, p.digest)
      .catch(
        (err: unknown) =>
          ({ ok: false, reason: 'invalid-assertion', detail: errorText(err) }) as const,
      )
    if (this.#pending.get(d.id) !== p) {
      const ended = this.#settled.get(d.id)
      if (ended === 'withdrawn' || ended === 'expired') this.#reject(ended, fields)
      else this.#reject('already-settled', { ...fields, ...(ended && { state: ended }) })
      return
    }
    if (!verdict.ok) {
      this.#reject(verdict.reason, {
        ...fields,
        critical: true,
        ...(verdict.detail !== undefined && { detail: verdict.detail }),
      })
      this.#tellRefused(d.phone, p, verdict.reason)
      return
    }
    this.#accept(d, p, { ...fields, owner: verdict.owner })
  }

  /**
   * The phone whose signed yes failed the owner's check is told so, on its own reply topic and
   * signed with its key, so it can try again rather than wait for the request to run out. Only
   * here: the MAC, window and nonce had verified (it is the phone), while any other refusal gets
   * no answer, so that nobody can probe the device with forgeries.
   */
  #tellRefused(phone: string, p: Pending, reason: OwnerRefusal): void {
    const key = this.#options.phones().get(phone)
    if (!key) return
    sendReply(
      {
        connection: this.#conn,
        topics: this.topics,
        deviceId: this.#options.deviceId,
        clock: this.#clock,
        logger: this.#log,
      },
      { phone, key, re: p.request.id },
      p.refusalsTold++,
      'error',
      { code: OWNER_REFUSED_CODE, reason, message: OWNER_REFUSAL_TEXT[reason] },
    )
  }

  #accept(d: DecisionMessage, p: Pending, fields: Record<string, unknown>): void {
    const state: OutcomeState = d.decision === 'approve' ? 'approved' : 'denied'
    // The outcome tells the phones what the gate will remember (a critical tool: once only).
    const grant = state === 'approved' ? rememberedGrant(p.request.critical, d.grant) : undefined
    this.#log.info({ ...fields, state, ...(grant !== undefined && { grant }) }, 'decision accepted')
    const resolve = p.resolve
    this.#settle(d.id, state, d.phone, grant)
    resolve({ decision: d.decision, grant: d.grant, by: d.phone })
  }

  /** Logs the summary of rejections held back so far (shutdown, tests). */
  flushRejections(): void {
    this.#rejections.flush()
  }

  /** Ends every pending approval as withdrawn (the device is shutting down). */
  withdrawAll(): void {
    for (const [id, p] of [...this.#pending]) {
      this.#settle(id, 'withdrawn')
      p.reject(new NocturnError('NOC_ERR_CANCELLED', 'the speaker is shutting down'))
    }
  }
}

/**
 * The digest of a leftover request, computed as a phone would from what it received; for a payload
 * that is no JSON object at all (no phone could have shown it) the digest of the empty object.
 */
function leftoverDigest(payload: Buffer): string {
  try {
    const raw: unknown = JSON.parse(payload.toString('utf8'))
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      return requestDigest(raw as Record<string, unknown>)
    }
  } catch {
    // not JSON: falls through
  }
  return requestDigest({})
}

/** The gate aborts with NOC_ERR_APPROVAL_TIMEOUT at expiry; `AbortSignal.timeout` says TimeoutError. */
function timedOut(reason: unknown): boolean {
  if (isNocturnError(reason)) return reason.code === 'NOC_ERR_APPROVAL_TIMEOUT'
  return reason instanceof Error && reason.name === 'TimeoutError'
}
