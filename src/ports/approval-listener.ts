import type { OutcomeState } from '../protocol/phone-side.js'
import type { Sent } from './approval-wire.js'
import type { ApprovalRequest, GrantRequest } from './approver.js'

/**
 * ApprovalListener: told by the approval desk as an approval is asked, sent and ended, so the
 * history, the device's state, the followers' feed and Web Push see every approval without
 * wrapping the approver. Told after the fact, synchronously; it must never hold an approval up,
 * and what it throws is logged by the desk and goes no further.
 */
export interface ApprovalListener {
  /** The gate asked; it may still fail to go out. */
  asked?(request: ApprovalRequest): void
  /** It went out, exactly as `sent`. */
  sent?(request: ApprovalRequest, sent: Sent): void
  ended?(ending: ApprovalEnded): void
}

export interface ApprovalEnded {
  readonly request: ApprovalRequest
  /** `failed`: it never reached anyone (unreachable, refused by the broker); nobody was asked. */
  readonly state: OutcomeState | 'failed'
  readonly by?: string
  /** What the device remembered with a yes. */
  readonly grant?: GrantRequest
  readonly at: number
  /** The outcome as it went out to the phones, when one did. */
  readonly outcome?: Sent
}
