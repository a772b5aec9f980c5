import type { Gate } from './gate.js'
import type { Logger } from './logger.js'

/** Where a request came from: speech in the room, or a typed message from a paired phone. */
export type Channel = 'voice' | 'text'

/** What the gate reports when it starts waiting for a human. */
export interface PendingNotice {
  readonly approvalId: string
  /** Who is asked, e.g. "Anna's phone". */
  readonly audience: string
  readonly tool: string
  /** One human sentence: what will happen on a yes. */
  readonly action: string
}

/**
 * The call context, travelling with every tool call as Go's `ctx` would: cancellation, where the
 * call came from, the gate installed for it, a logger, and the hook for "waiting for a human".
 */
export interface CallContext {
  readonly signal: AbortSignal
  readonly channel: Channel
  readonly conversationId: string
  /** The model's id for this call, when it has one. */
  readonly callId: string
  readonly gate: Gate
  readonly logger: Logger
  /** For a typed message: the paired phone that sent it. Asking is never approving. */
  readonly askedBy?: string
  onPending(notice: PendingNotice): void
}
