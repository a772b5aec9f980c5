import type { Channel } from '../core/types.js'
import type { GrantRequest } from './approver.js'

/**
 * ApprovalHistory: every ending of an approval kept on the device — approved or denied (on which
 * phone, and what was remembered), withdrawn, expired, or allowed by a remembered yes without
 * asking (`coveredBy`) — with the request's sentence and arguments,
 * so a household can answer "who let the plumber in, and when?" (docs/protocol.md, "History").
 * Kept under the store's retention: endings older than the conversations kept go with them.
 */
export interface ApprovalHistory {
  record(ending: ApprovalEnding): void
  /** Newest first; `before` (an `endedAt`) and `beforeId` continue a page. */
  list(page: { limit: number; before?: number; beforeId?: string }): ApprovalEnding[]
}

export type ApprovalEndingState = 'approved' | 'denied' | 'withdrawn' | 'expired'

export interface ApprovalEnding {
  readonly id: string
  readonly tool: string
  /** The sentence the phones were shown. */
  readonly action: string
  readonly args: unknown
  readonly critical: boolean
  readonly channel: Channel
  readonly conversationId?: string
  /** The paired phone whose typed message led to the call (text only). */
  readonly askedBy?: string
  /** The words that led to the call, as the phones were shown them (the request's `said`). */
  readonly said?: string
  /** The devices the call acted on (Home Assistant entity ids), as in the request. */
  readonly targets?: readonly string[]
  readonly state: ApprovalEndingState
  /** Who decided (approved, denied): a phone id, or `console`. */
  readonly by?: string
  /** What the device remembered with a yes (a critical tool: always once). */
  readonly grant?: GrantRequest
  /** Allowed by a remembered yes, nobody asked: that grant (`by` is then whose yes it was). */
  readonly coveredBy?: GrantCover
  readonly askedAt: number
  readonly endedAt: number
}

/** The grant that allowed a call without asking, as the History shows it (docs/protocol.md). */
export interface GrantCover {
  readonly grant: string
  /** Whose yes created it: a phone id, or `console`. */
  readonly by: string
  readonly createdAt: number
  /** `conversation`: in force within the ending's conversation; `until`: until `until`. */
  readonly expiry: 'conversation' | 'until'
  readonly until?: number
}
