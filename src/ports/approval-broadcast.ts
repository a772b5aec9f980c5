import type { ApprovalRequest } from './approver.js'

/**
 * ApprovalBroadcast: told each approval request as it was sent to the phones and how it ended, so
 * it can reach phones that are not on the broker right now (Web Push, alert channels). It is told
 * after the fact and must never hold an approval up: whatever it does happens on its own time, and
 * a failure there is its own to log.
 */
export interface ApprovalBroadcast {
  requested(request: BroadcastRequest): void
  ended(ending: BroadcastEnding): void
}

export interface BroadcastRequest {
  readonly request: ApprovalRequest
  /** The topic it was published on, and the message exactly as published (one MAC per phone). */
  readonly topic: string
  readonly message: string
  /** The phones it was signed for. */
  readonly phones: readonly string[]
}

export interface BroadcastEnding {
  readonly id: string
  readonly state: 'approved' | 'denied' | 'withdrawn' | 'expired'
  /** The outcome's topic and the outcome exactly as published (one MAC per phone). */
  readonly topic: string
  readonly message: string
  /** The phones the request went to. */
  readonly phones: readonly string[]
}
