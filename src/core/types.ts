import type { Logger } from './logger.js'
import type { JsonSchema } from './schema.js'

/**
 * The vocabulary of a tool call, in one module because its parts refer to each other: a tool is
 * called with a context, and the context carries the gate that checks a tool. `tool.ts`,
 * `policy.ts`, `gate.ts` and the ports build on it and are imported by none of it.
 */

/** Where a request came from: speech in the room, or a typed message from a paired phone. */
export type Channel = 'voice' | 'text'

/** allow: run; ask: a phone must say yes; deny: never. */
export type Policy = 'allow' | 'ask' | 'deny'

/** What the gate reports when it starts waiting for a human. */
export interface PendingNotice {
  readonly approvalId: string
  /** Who is asked, e.g. "Anna's phone". */
  readonly audience: string
  readonly tool: string
  /** One human sentence: what will happen on a yes. */
  readonly action: string
}

/** The gate as a call sees it (`core/gate.ts` is the one implementation). */
interface CallGate {
  /**
   * Resolves when the call may run; throws a NocturnError saying why not. `prepared` is what the
   * tool said this call will do (`Tool.prepare`), when it decides that per call.
   */
  check(tool: Tool, args: unknown, ctx: CallContext, prepared?: PreparedCall): Promise<void>
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
  readonly gate: CallGate
  readonly logger: Logger
  /** For a typed message: the paired phone that sent it. Asking is never approving. */
  readonly askedBy?: string
  /**
   * The words that led to this call: the last thing said in the room, or the typed message. The
   * person asked reads them beside the action, so they travel with the approval request.
   */
  readonly said?: string
  onPending(notice: PendingNotice): void
}

/**
 * What one call of a tool will do, decided once before the gate looks at it: for a tool whose
 * danger depends on its arguments (one Home Assistant tool both switches off a lamp and unlocks a
 * door). The gate reads `critical` and `action` from it, and `run` carries out exactly what was
 * decided here, never a new reading of the arguments.
 */
export interface PreparedCall {
  readonly critical: boolean
  /** One human sentence, as `Tool.describe` would give. */
  readonly action: string
  /** What the call will touch, by id (e.g. `lock.front_door`); they travel in the signed request. */
  readonly targets?: readonly string[]
  run(ctx: CallContext): Promise<unknown>
}

/**
 * A tool the model may call. Tools do I/O only; validation, policy and approval wrap them from the
 * outside (the ToolSet and the gate), so a tool never checks who is asking.
 */
export interface Tool<A = unknown> {
  readonly name: string
  /** What the model reads to decide when to call it. */
  readonly description: string
  readonly parameters: JsonSchema
  /** Needs a second look every time: policy never `allow`, no grant "until" a time. */
  readonly critical?: boolean
  /** The tool's own default policy per channel; config may override it. */
  readonly policy?: Partial<Record<Channel, Policy | undefined>> | undefined
  /** One human sentence for the approval request, e.g. "unlock the front door". */
  describe?(args: A): string
  /**
   * The part of the arguments a remembered yes covers, e.g. `{ room }` for a light: a grant then
   * covers any brightness in that room. Without it a grant covers exactly these arguments.
   */
  grantPattern?(args: A): Record<string, unknown>
  /**
   * Decides what this call will do before the gate checks it (see `PreparedCall`). Without it the
   * tool's own `critical` and `describe` hold for every call, and `call` runs it.
   */
  prepare?(args: A): PreparedCall
  /** Runs the tool. Returns what the model reads; throws when the tool failed. */
  call(ctx: CallContext, args: A): Promise<unknown>
}
