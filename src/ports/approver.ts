import type { Channel } from '../core/types.js'

/**
 * Approver: asks a human (a phone, or the console during development) whether an action may go
 * ahead. The request is withdrawn from everyone who was asked when `signal` aborts.
 */
export interface Approver {
  /** Who is asked, in words the model can say: "Anna's phone", "your phones". */
  readonly audience: string
  /**
   * Why nobody can be asked right now (no broker, no paired phone), or undefined when a request
   * can go out. Checked before the model is told "waiting for approval", so an unreachable phone
   * gets one clear answer instead of a "waiting" followed by a failure.
   */
  unavailable?(): string | undefined
  /**
   * Asks, until a decision or until `signal` aborts. The caller owns the deadline (the gate aborts
   * at `expiresAt` with a NOC_ERR_APPROVAL_TIMEOUT reason, so the approver can tell "expired" from
   * "withdrawn"); an approver keeps no timer of its own.
   */
  request(approval: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision>
}

export interface ApprovalRequest {
  readonly id: string
  readonly tool: string
  /** One human sentence: what will happen if the person says yes. */
  readonly action: string
  readonly args: unknown
  /** SHA-256 of the canonical arguments; a decision binds to exactly these. */
  readonly argsDigest: string
  readonly channel: Channel
  readonly conversationId: string
  /**
   * Whether this call is critical: it asks every time (a yes is remembered once only), a phone's
   * own typed call needs another phone, a yes needs its owner. Decided per call by the gate (today
   * from the tool's flag); everything after the gate — the desk, the wire, the History — reads it
   * from here, never from the tool.
   */
  readonly critical: boolean
  /**
   * What the call will touch, by id (Home Assistant entity ids), when the tool resolved it before
   * asking: signed with the request, and exactly what runs on a yes.
   */
  readonly targets?: readonly string[]
  /**
   * The paired phone that typed the message this call came from (text only). The approver decides
   * whether that same phone may also approve it (docs/protocol.md, "Who may approve a typed call").
   */
  readonly askedBy?: string
  /** The words that led to the call (`CallContext.said`), as said or typed: the approver cuts them. */
  readonly said?: string
  readonly createdAt: number
  readonly expiresAt: number
}

export type GrantRequest = 'once' | 'session' | { readonly until: number }

export interface ApprovalDecision {
  readonly decision: 'approve' | 'deny'
  /** How long the yes should be remembered; absent means once. */
  readonly grant?: GrantRequest
  /** Who decided, e.g. a paired phone's id. */
  readonly by: string
}
