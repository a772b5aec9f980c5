import type { Channel } from '../core/types.js'
import type { OutcomeState } from '../protocol/phone-side.js'
import type { Sent } from './approval-wire.js'
import type { ApprovalRequest, GrantRequest } from './approver.js'
import type { Grant } from './grant-store.js'

/**
 * ApprovalListener: told by the approval desk as an approval is asked, sent and ended — or
 * answered by a remembered yes without asking (`covered`) — so the
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
  /** A remembered yes let a call run without asking: `id` is this use's own, fresh. */
  covered?(id: string, call: CoveredCall): void
}

/**
 * A call a grant allowed, as the gate saw it: what would have been asked (the request's fields),
 * the grant that answered instead, and when the gate let it run.
 */
export interface CoveredCall {
  readonly tool: string
  readonly action: string
  readonly args: unknown
  readonly critical: boolean
  readonly channel: Channel
  readonly conversationId: string
  readonly askedBy?: string | undefined
  readonly said?: string | undefined
  /** The devices it acts on, as a request would have named them. */
  readonly targets?: readonly string[] | undefined
  readonly grant: Grant
  readonly at: number
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
