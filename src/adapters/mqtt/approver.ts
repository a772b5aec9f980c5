import { raceAbort } from '../../core/abort.js'
import { BoundedMap } from '../../core/bounded-map.js'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { ApprovalCounter, ApprovalWire, Sent, WireEnding } from '../../ports/approval-wire.js'
import type { ApprovalRequest } from '../../ports/approver.js'
import type { Clock } from '../../ports/clock.js'
import {
  DEFAULT_PREFIX,
  MAX_PAYLOAD_BYTES,
  type OutcomeMessage,
  type PhoneKeys,
  parseApprovalTopic,
  type Topics,
  topicsFor,
} from '../../protocol/index.js'
import { outcomeMessage, requestMessage } from './approval-messages.js'
import { type MqttConnection, PublishRefused } from './connection.js'
import { DecisionReceiver, type RejectReason, UNKNOWN } from './decision-receiver.js'
import { RequestTopicGuard } from './request-topic-guard.js'

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
  /** How many nonces are remembered (bounds memory under a flood). */
  readonly remember?: number
  /** Each refused decision's reason, after it was logged (the device's state counts them). */
  readonly onRefused?: (reason: RejectReason) => void
}

const SAY_UNREACHABLE = "I can't reach your phone right now"

/**
 * The approval wire over MQTT (protocol v1, docs/protocol.md): each request is published retained,
 * signed for every paired phone; each decision's MAC, window and nonce are verified before the
 * desk is handed it; every ending clears the retained request and publishes a signed outcome.
 * While the broker is away new requests fail at once; pending ones are re-published on reconnect,
 * and endings owed meanwhile are announced then.
 */
export class MqttApprover implements ApprovalWire {
  readonly audience: string
  readonly topics: Topics
  readonly #options: MqttApproverOptions
  readonly #conn: MqttConnection
  readonly #log: Logger
  readonly #clock: Clock
  readonly #decisions: DecisionReceiver
  readonly #guard: RequestTopicGuard
  /** Endings that happened while disconnected: cleared and announced on reconnect. */
  readonly #owed = new BoundedMap<string, OutcomeMessage>(1024)
  #desk: ApprovalCounter | undefined
  #subscribed = false
  #everReady = false
  readonly #ready: Promise<void>
  #resolveReady!: () => void

  constructor(options: MqttApproverOptions) {
    this.#options = options
    this.#conn = options.connection
    this.audience = options.audience ?? 'your phone'
    this.topics = topicsFor(options.prefix ?? DEFAULT_PREFIX, options.deviceId)
    this.#log = options.logger.child({ component: 'mqtt-approver', device: options.deviceId })
    this.#clock = options.clock
    this.#decisions = new DecisionReceiver({
      connection: this.#conn,
      topics: this.topics,
      deviceId: options.deviceId,
      phones: options.phones,
      clock: options.clock,
      logger: this.#log,
      remember: options.remember ?? 4096,
      ...(options.skewMs !== undefined && { skewMs: options.skewMs }),
      ...(options.onRefused && { onRefused: options.onRefused }),
      leftover: (id) => this.#guard.leftover(id),
    })
    this.#guard = new RequestTopicGuard({
      connection: this.#conn,
      topics: this.topics,
      logger: this.#log,
      announce: (id, digest) =>
        this.#announce(
          outcomeMessage({ id, state: 'expired', at: this.#clock.now(), digest }, options.phones()),
        ),
      republish: (id, payload) => this.#publishRequest(id, payload),
      invalidDecision: (fields) => this.#decisions.reject('invalid-topic', fields),
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

  answerTo(desk: ApprovalCounter): void {
    this.#desk = desk
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

  unavailable(): string | undefined {
    if (!this.#reachable() && !this.#firstConnectionUnderWay())
      return 'the MQTT broker is unreachable'
    if (this.#options.phones().size === 0) return 'no phone is paired with this speaker'
    return undefined
  }

  async send(request: ApprovalRequest, signal: AbortSignal): Promise<Sent> {
    const log = this.#log.child({ approvalId: request.id })
    if (!this.#reachable()) {
      if (!this.#firstConnectionUnderWay()) {
        log.warn({ event: 'approval_refused_unreachable' }, 'approval refused: broker unreachable')
        throw new NocturnError('NOC_ERR_APPROVER_UNREACHABLE', SAY_UNREACHABLE)
      }
      log.info(
        { event: 'approval_awaits_broker' },
        'approval waits for the first broker connection',
      )
      // Subscribed, or the first attempt failed (then the request is refused as unreachable).
      const attempt = this.#conn
        .firstAttempt()
        .then(() => (this.#conn.connected ? this.#ready : undefined))
      await raceAbort(Promise.race([this.#ready, attempt]), signal)
      return this.send(request, signal)
    }
    const phones = this.#options.phones()
    if (phones.size === 0) {
      log.warn({ event: 'approval_refused_no_phone' }, 'approval refused: no phone is paired')
      throw new NocturnError('NOC_ERR_APPROVER_UNREACHABLE', 'no phone is paired with this speaker')
    }
    const { message, digest } = requestMessage(this.#options.deviceId, request, phones)
    const bytes = Buffer.byteLength(message)
    if (bytes > MAX_PAYLOAD_BYTES) {
      log.warn(
        { event: 'approval_refused_too_large', bytes },
        'approval refused: request too large',
      )
      throw new NocturnError('NOC_ERR_APPROVER_UNREACHABLE', 'the request is too large to send')
    }
    log.info({ phones: phones.size, expiresAt: request.expiresAt }, 'approval requested')
    this.#publishRequest(request.id, message)
    return { topic: this.topics.request(request.id), message, phones: [...phones.keys()], digest }
  }

  end(ending: WireEnding): Sent {
    const id = ending.request.id
    this.#decisions.forget(id)
    const outcome = outcomeMessage(
      { ...ending, id, digest: ending.sent.digest },
      this.#options.phones(),
    )
    this.#announce(outcome)
    const message = JSON.stringify(outcome)
    return {
      topic: this.topics.outcome(id),
      message,
      phones: Object.keys(outcome.macs ?? {}),
      digest: ending.sent.digest,
    }
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
          this.#desk?.fail(id, err)
          return
        }
        // The request stays pending: it is re-published when the broker is back.
        this.#log.warn(
          { event: 'approval_request_not_published', approvalId: id, err: errorText(err) },
          'approval request not published',
        )
      })
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
    const pending = this.#desk?.pending() ?? []
    for (const { request, sent } of pending) this.#publishRequest(request.id, sent.message)
    const owed = this.#owed.drain()
    for (const outcome of owed) this.#announce(outcome)
    if (pending.length + owed.length > 0) {
      this.#log.info({ pending: pending.length, owed: owed.length }, 'approvals re-published')
    }
    this.#everReady = true
    this.#resolveReady()
  }

  #onMessage(topic: string, payload: Buffer, retained: boolean): void {
    const where = parseApprovalTopic(this.topics, topic)
    if (!where) this.#guard.badTopic(topic, payload, retained)
    else if (where.kind === 'decision') this.#decisions.receive(where.id, payload, this.#desk)
    else if (where.kind === 'request') {
      const found = this.#desk?.lookup(where.id) ?? UNKNOWN
      this.#guard.requestTopic(where.id, payload, retained, found)
    }
  }

  /** Logs the summary of rejections held back so far (shutdown, tests). */
  flushRejections(): void {
    this.#decisions.flush()
  }
}
