import type { ReplyKind } from '../protocol/conversations.js'
import type { PhoneOp, PhoneRequest } from '../protocol/grant-ops.js'
import { MAX_PAYLOAD_BYTES } from '../protocol/limits.js'

/**
 * PhoneRequestChannel: the phones' signed requests (docs/protocol.md, "Conversations"), each
 * verified before it is handed to whoever serves its operation, each answer signed for that phone
 * alone. The conversations, grants, history, owner and push endpoints serve on it; how a request
 * travels and is checked is the adapter's.
 */
export interface PhoneRequestChannel {
  /** An endpoint's operations: each op is served by one endpoint. */
  serve(ops: Partial<Record<PhoneOp, OpHandler>>): void
  /** The phones paired now (a revoked one is answered nothing more). */
  phones(): ReadonlyMap<string, Uint8Array>
  /** One signed answer to `to`, numbered by `counter` when given (a follow's events). */
  reply(to: ReplyTo, kind: ReplyKind, body: unknown, counter?: ReplyCounter): void
}

/** Who an answer goes to: the phone, its key, and the request (or approval) it answers. */
export interface ReplyTo {
  readonly phone: string
  readonly key: Uint8Array
  readonly re: string
}

/** A reply numbered by its own counter (a follow's events outlive any memory of request ids). */
export interface ReplyCounter {
  n: number
}

/** One verified request, as an endpoint serves it: what was asked and how to answer. */
export interface PhoneAsk {
  readonly request: PhoneRequest
  readonly to: ReplyTo
  reply(kind: ReplyKind, body: unknown, counter?: ReplyCounter): void
  /** Items in as many `items` replies as their size needs, each shrunk where one alone is too big. */
  items<T>(items: readonly T[], shrink: (item: T) => unknown): void
  /** The request cannot be done: the phone is told why, the reason logged. */
  refuse(err: unknown): void
}

/** Serves one operation; what it throws is refused to the phone. */
export type OpHandler = (ask: PhoneAsk) => void

/** Replies stay well under 16 KiB: the envelope (ids, MAC) takes the rest. */
export const ITEMS_BUDGET = MAX_PAYLOAD_BYTES - 2048
