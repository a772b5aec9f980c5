import { BoundedMap } from '../../core/bounded-map.js'
import type { Logger } from '../../core/logger.js'
import type { Lookup } from '../../ports/approval-wire.js'
import type { Topics } from '../../protocol/index.js'
import { leftoverDigest } from './approval-messages.js'
import type { MqttConnection } from './connection.js'

export interface RequestTopicGuardOptions {
  readonly connection: MqttConnection
  readonly topics: Topics
  readonly logger: Logger
  /** Reports a leftover request expired, signed over `digest` (what a phone that showed it verified). */
  readonly announce: (id: string, digest: string) => void
  /** Puts a pending request's own payload back. */
  readonly republish: (id: string, payload: string) => void
  /** A decision under an id outside the id alphabet. */
  readonly invalidDecision: (fields: Record<string, unknown>) => void
}

/**
 * What is on the device's request topics must be its own pending requests, or nothing: overwritten
 * ones are restored, leftovers of a previous run cleared and reported expired, foreign ones
 * cleared. It decides from the bytes and from what the desk says the id stands for.
 */
export class RequestTopicGuard {
  readonly #o: RequestTopicGuardOptions
  /** Leftovers already cleared: their echo is not reported twice. */
  readonly #cleared = new BoundedMap<string, true>(1024)

  constructor(options: RequestTopicGuardOptions) {
    this.#o = options
  }

  /** Whether `id` was a leftover this run cleared (a decision for it is refused as expired). */
  leftover(id: string): boolean {
    return this.#cleared.has(id)
  }

  requestTopic(id: string, payload: Buffer, retained: boolean, found: Lookup): void {
    const { connection, topics, logger: log } = this.#o
    if (found.pending) {
      if (payload.equals(Buffer.from(found.sent.message))) return
      log.warn(
        { event: 'pending_request_republished', approvalId: id, bytes: payload.length },
        'pending request overwritten or cleared by another client; re-published',
      )
      this.#o.republish(id, found.sent.message)
      return
    }
    if (payload.length === 0) return
    const known = found.state !== undefined || this.#cleared.has(id)
    if (retained && !known) {
      // Left behind by a previous run (or planted): nobody can answer it any more.
      log.info({ approvalId: id }, 'leftover request cleared and reported expired')
      this.#cleared.set(id, true)
      this.#o.announce(id, leftoverDigest(payload))
      return
    }
    if (!known) {
      log.warn(
        { event: 'foreign_request_cleared', approvalId: id },
        'request not published by this device cleared',
      )
    }
    // Our own echo arriving after the ending, or someone re-planting a settled request: clear it.
    connection.publish(topics.request(id), '', { retain: true, qos: 1 }).catch(() => {})
  }

  /**
   * A message under our approvals whose id is outside the id alphabet (`approvals/not json`, an
   * 80-character id): never ours, so a retained one is cleared and reported, a decision rejected.
   */
  badTopic(topic: string, payload: Buffer, retained: boolean): void {
    const head = `${this.#o.topics.base}/approvals/`
    if (!topic.startsWith(head)) return
    const rest = topic.slice(head.length).split('/')
    const shown = { topic: topic.slice(0, 200), bytes: payload.length }
    if (rest.length === 2 && rest[1] === 'decision') {
      this.#o.invalidDecision(shown)
      return
    }
    if (rest.length !== 1 || payload.length === 0) return
    // Clearing is safe: no request of ours can live there (our ids always match the alphabet).
    this.#o.logger.warn(
      { event: 'invalid_request_cleared', ...shown, retained },
      'request under an invalid id cleared',
    )
    this.#o.connection.publish(topic, '', { retain: true, qos: 1 }).catch(() => {})
  }
}
