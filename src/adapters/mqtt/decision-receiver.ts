import { BoundedMap } from '../../core/bounded-map.js'
import type { Logger } from '../../core/logger.js'
import type { ApprovalCounter, DeskRefusal, Lookup } from '../../ports/approval-wire.js'
import type { Clock } from '../../ports/clock.js'
import type { OwnerRefusal } from '../../ports/owner-check.js'
import {
  decisionMacInput,
  decisionSchema,
  type PhoneKeys,
  type PhoneRefusal,
  PhoneVerifier,
  parsePayload,
  type Topics,
} from '../../protocol/index.js'
import { OWNER_REFUSED_CODE } from '../../protocol/phone-side.js'
import type { MqttConnection } from './connection.js'
import { RejectionLog } from './rejection-log.js'
import { sendReply } from './signed-reply.js'

export type RejectReason =
  | 'oversized'
  | 'malformed-json'
  | 'invalid-payload'
  | 'id-mismatch'
  | DeskRefusal
  | PhoneRefusal
  | 'invalid-topic'

/** What the phone is told when its yes failed the owner's check (docs/protocol.md). */
const OWNER_REFUSAL_TEXT: Record<OwnerRefusal, string> = {
  'no-credential': 'this phone has no screen-lock key registered with the speaker',
  'no-assertion': 'the yes came without the screen-lock check',
  'unknown-credential': 'the speaker knows another screen-lock key for this phone',
  'not-user-verified': 'the screen lock was not used',
  'invalid-assertion': 'the screen-lock check did not verify for this request',
}

/** What an id is before a desk is told of it: nothing of ours. */
export const UNKNOWN: Lookup = { pending: false, refusal: 'unknown-request' }

export interface DecisionReceiverOptions {
  readonly connection: MqttConnection
  readonly topics: Topics
  readonly deviceId: string
  readonly phones: PhoneKeys
  readonly clock: Clock
  readonly logger: Logger
  readonly skewMs?: number
  /** How many nonces are remembered (bounds memory under a flood). */
  readonly remember: number
  /** Each refused decision's reason, after it was logged (the device's state counts them). */
  readonly onRefused?: (reason: RejectReason) => void
  /** Whether `id` was a leftover of a previous run, cleared this run (refused as expired). */
  readonly leftover: (id: string) => boolean
}

/**
 * The decisions' side of the approval wire: a decision's bytes become an answer for the desk only
 * once its payload parses, its MAC verifies over the digest this device published, its time is
 * within the request's lifetime and its nonce is new. Every refusal is counted and logged (in
 * summaries under a flood); only a phone whose verified yes failed the owner's check is answered.
 */
export class DecisionReceiver {
  readonly #o: DecisionReceiverOptions
  readonly #verifier: PhoneVerifier
  readonly #rejections: RejectionLog<RejectReason>
  /** Refused yeses a phone was told of, per approval: `n` of the next such answer. */
  readonly #refusalsTold = new BoundedMap<string, number>(1024)

  constructor(options: DecisionReceiverOptions) {
    this.#o = options
    this.#rejections = new RejectionLog(options.logger, 'decision rejected', options.clock, {
      ...(options.onRefused && { counted: options.onRefused }),
    })
    this.#verifier = new PhoneVerifier({
      phones: options.phones,
      clock: options.clock,
      remember: options.remember,
      ...(options.skewMs !== undefined && { skewMs: options.skewMs }),
    })
  }

  /** Counted always; logged in full only for the first few per reason, then in summaries. */
  reject(reason: RejectReason, fields: Record<string, unknown>): void {
    this.#rejections.add(reason, { event: 'decision_rejected', ...fields })
  }

  /** Logs the summary of rejections held back so far (shutdown, tests). */
  flush(): void {
    this.#rejections.flush()
  }

  /** The approval `id` ended: its count of refusals told is no longer needed. */
  forget(id: string): void {
    this.#refusalsTold.delete(id)
  }

  receive(topicId: string, payload: Buffer, desk: ApprovalCounter | undefined): void {
    const parsed = parsePayload(decisionSchema, payload)
    if (!parsed.ok) {
      this.reject(parsed.reason, {
        approvalId: topicId,
        bytes: payload.length,
        detail: parsed.detail,
      })
      return
    }
    const d = parsed.value
    const fields = { approvalId: topicId, phone: d.phone }
    if (d.id !== topicId) {
      this.reject('id-mismatch', { ...fields, payloadId: d.id })
      return
    }
    const found = desk?.lookup(d.id) ?? UNKNOWN
    if (!desk || !found.pending) {
      const gone = found.pending ? 'unknown-request' : found.refusal
      const refusal = gone === 'unknown-request' && this.#o.leftover(d.id) ? 'expired' : gone
      const state = found.pending ? undefined : found.state
      this.reject(refusal, { ...fields, ...(refusal === 'already-settled' && state && { state }) })
      return
    }
    // Signed over the digest of the request as this device published it: the one the phone showed.
    const verdict = this.#verifier.verify(
      d,
      decisionMacInput({ ...d, digest: found.sent.digest }),
      { from: found.request.createdAt, to: found.request.expiresAt },
    )
    if (!verdict.ok) {
      this.reject(verdict.reason, { ...fields, ...verdict.fields })
      return
    }
    const answer = {
      decision: d.decision,
      phone: d.phone,
      grant: d.grant,
      ...(d.owner !== undefined && { owner: d.owner }),
    }
    void desk.answer(d.id, answer).then((taken) => {
      if (taken.ok) return
      this.reject(taken.reason, { ...fields, ...taken.fields })
      if (taken.tell) this.#tellRefused(d.phone, d.id, taken.tell)
    })
  }

  /**
   * The phone whose signed yes failed the owner's check is told so, on its own reply topic and
   * signed with its key, so it can try again rather than wait for the request to run out. Only
   * here: the MAC, window and nonce had verified (it is the phone), while any other refusal gets
   * no answer, so that nobody can probe the device with forgeries.
   */
  #tellRefused(phone: string, id: string, reason: OwnerRefusal): void {
    const key = this.#o.phones().get(phone)
    if (!key) return
    const n = this.#refusalsTold.get(id) ?? 0
    this.#refusalsTold.set(id, n + 1)
    sendReply({ ...this.#o, connection: this.#o.connection }, { phone, key, re: id }, n, 'error', {
      code: OWNER_REFUSED_CODE,
      reason,
      message: OWNER_REFUSAL_TEXT[reason],
    })
  }
}
