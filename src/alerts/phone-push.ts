import { createHash } from 'node:crypto'
import { Backoff, type BackoffPolicy } from '../core/backoff.js'
import { BoundedMap } from '../core/bounded-map.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type {
  ApprovalBroadcast,
  BroadcastEnding,
  BroadcastRequest,
} from '../ports/approval-broadcast.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import { MAX_PUSH_PLAINTEXT, type PushOptions, type PushSender } from '../ports/push.js'
import type { PushSubscriptionStore, StoredPushSubscription } from '../ports/push-subscriptions.js'
import { pushEnvelope } from '../protocol/push-ops.js'

/**
 * 429 and 5xx: tried again after 1 s, 2 s and 4 s, then given up — a request lives minutes, and
 * a push service that is down that long is better left to the phone that opens the app.
 */
const PUSH_RETRY: BackoffPolicy = {
  initialMs: 1000,
  maxMs: 30_000,
  jitter: 0.2,
  giveUpAfter: 4,
}

/** How long a push service may hold a close for a phone that is offline. */
const ENDED_TTL_SECONDS = 3600

export interface PhonePushOptions {
  readonly subscriptions: PushSubscriptionStore
  readonly sender: PushSender
  /** The phones paired now: a revoked phone's subscriptions are forgotten. */
  readonly phones: () => ReadonlyMap<string, unknown>
  readonly deviceId: string
  readonly clock: Clock
  readonly logger: Logger
  readonly retry?: BackoffPolicy
}

/**
 * Web Push to the paired phones (docs/protocol.md "Push to a phone in a pocket"): each request
 * goes, encrypted for each subscribed browser, holding the request exactly as published on the
 * broker, so a service worker verifies it with the phone's key before it shows anything; each
 * ending goes the same way, so the notification is closed or replaced. A subscription the push
 * service calls gone (404, 410) is forgotten; 429 and 5xx are tried again, a few times.
 */
export class PhonePush implements ApprovalBroadcast {
  readonly #o: PhonePushOptions
  readonly #log: Logger
  /** Approvals that ended: a retry of their request push is dropped (the ending supersedes it). */
  readonly #ended = new BoundedMap<string, true>(1024)
  readonly #waits = new Map<TimerHandle, () => void>()
  readonly #inFlight = new Set<Promise<void>>()
  #closed = false

  constructor(options: PhonePushOptions) {
    this.#o = options
    this.#log = options.logger.child({ component: 'web-push' })
  }

  requested(r: BroadcastRequest): void {
    const { id } = r.request
    const ttlSeconds = Math.max(1, Math.ceil((r.request.expiresAt - this.#o.clock.now()) / 1000))
    for (const sub of this.#targets(r.phones)) {
      const payload = this.#requestPayload(r, sub.phone)
      this.#deliver(sub, id, 'request', payload, {
        ttlSeconds,
        topic: pushTopic(id),
        urgency: 'high',
      })
    }
  }

  ended(e: BroadcastEnding): void {
    this.#ended.set(e.id, true)
    const payload = pushEnvelope({
      kind: 'outcome',
      device: this.#o.deviceId,
      id: e.id,
      topic: e.topic,
      message: e.message,
    })
    for (const sub of this.#targets(e.phones)) {
      this.#deliver(sub, e.id, 'outcome', payload, {
        ttlSeconds: ENDED_TTL_SECONDS,
        topic: pushTopic(e.id),
        urgency: 'normal',
      })
    }
  }

  /** Forgets the subscriptions of phones no longer paired; how many went. */
  prune(): number {
    const paired = this.#o.phones()
    let removed = 0
    const gone = new Set(
      this.#o.subscriptions
        .pushSubscriptions()
        .map((s) => s.phone)
        .filter((p) => !paired.has(p)),
    )
    for (const phone of gone) {
      const n = this.#o.subscriptions.removePhonePushSubscriptions(phone)
      removed += n
      this.#log.info({ phone, subscriptions: n }, 'push subscriptions of an unpaired phone removed')
    }
    return removed
  }

  /** Resolves when every push under way (retries included) has finished. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight])
  }

  /** Sends nothing more; retries waiting are dropped. */
  close(): void {
    this.#closed = true
    for (const [t, resolve] of this.#waits) {
      this.#o.clock.clearTimeout(t)
      resolve()
    }
    this.#waits.clear()
  }

  /** The subscriptions of the phones a message was signed for that are still paired. */
  #targets(phones: readonly string[]): StoredPushSubscription[] {
    if (this.#closed) return []
    try {
      this.prune()
      const wanted = new Set(phones)
      return this.#o.subscriptions.pushSubscriptions().filter((s) => wanted.has(s.phone))
    } catch (err) {
      this.#log.error(
        { event: 'push_subscriptions_unreadable', err: errorText(err) },
        'push subscriptions cannot be read; nothing pushed',
      )
      return []
    }
  }

  /**
   * The request as published; when that is too big for a push, the same request with only this
   * phone's MAC (the digest does not cover the MACs, so it verifies alike); when even that is too
   * big, a push that names the request, for the app to fetch it from the broker.
   */
  #requestPayload(r: BroadcastRequest, phone: string): string {
    const base = { device: this.#o.deviceId, id: r.request.id, topic: r.topic }
    const whole = pushEnvelope({ kind: 'request', ...base, message: r.message })
    if (Buffer.byteLength(whole) <= MAX_PUSH_PLAINTEXT) return whole
    const parsed = JSON.parse(r.message) as { macs?: Record<string, string> }
    const mac = parsed.macs?.[phone]
    const narrowed = JSON.stringify({ ...parsed, macs: mac === undefined ? {} : { [phone]: mac } })
    const one = pushEnvelope({ kind: 'request', ...base, message: narrowed })
    if (Buffer.byteLength(one) <= MAX_PUSH_PLAINTEXT) return one
    return pushEnvelope({ kind: 'open', ...base })
  }

  #deliver(
    sub: StoredPushSubscription,
    id: string,
    kind: 'request' | 'outcome',
    payload: string,
    options: PushOptions,
  ): void {
    const task = this.#tries(sub, id, kind, Buffer.from(payload), options)
      .catch((err: unknown) =>
        this.#log.error(
          { event: 'push_error', phone: sub.phone, approvalId: id, err: errorText(err) },
          'push failed',
        ),
      )
      .finally(() => this.#inFlight.delete(task))
    this.#inFlight.add(task)
  }

  async #tries(
    sub: StoredPushSubscription,
    id: string,
    kind: 'request' | 'outcome',
    payload: Buffer,
    options: PushOptions,
  ): Promise<void> {
    const backoff = new Backoff(this.#o.retry ?? PUSH_RETRY)
    const fields = { phone: sub.phone, approvalId: id, kind, service: serviceOf(sub.endpoint) }
    for (;;) {
      if (this.#closed || (kind === 'request' && this.#ended.has(id))) return
      const r = await this.#o.sender.send(sub, payload, options)
      if (r.kind === 'delivered') {
        this.#log.info({ ...fields, status: r.status }, 'push delivered')
        return
      }
      if (r.kind === 'gone') {
        // RFC 8030 §7.3: the subscription ended (unsubscribed, expired): never push to it again.
        this.#o.subscriptions.removePushSubscription(sub.phone, sub.endpoint)
        this.#log.info({ ...fields, status: r.status }, 'push subscription gone: removed')
        return
      }
      if (r.kind === 'failed') {
        this.#log.warn({ event: 'push_failed', ...fields, reason: r.reason }, 'push refused')
        return
      }
      const wait = Math.max(backoff.next(), r.retryAfterMs ?? 0)
      if (backoff.exhausted) {
        this.#log.warn(
          { event: 'push_gave_up', ...fields, reason: r.reason, tries: backoff.failures },
          'push not delivered; given up',
        )
        return
      }
      this.#log.info({ ...fields, reason: r.reason, waitMs: wait }, 'push to be tried again')
      await this.#sleep(wait)
    }
  }

  /** A wait on the clock that `close()` ends early. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = this.#o.clock.setTimeout(() => {
        this.#waits.delete(t)
        resolve()
      }, ms)
      this.#waits.set(t, resolve)
    })
  }
}

/**
 * The RFC 8030 Topic of an approval's pushes: the ending replaces an undelivered request. A topic
 * is at most 32 characters of base64url, so it is derived from the id rather than the id itself.
 */
function pushTopic(id: string): string {
  return createHash('sha256').update(id).digest('base64url').slice(0, 32)
}

/** An endpoint is a capability: only its origin is logged. */
function serviceOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin
  } catch {
    return 'unreadable'
  }
}
