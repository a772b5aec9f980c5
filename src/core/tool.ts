import type { CallContext, Channel } from './context.js'
import type { Policy } from './policy.js'
import type { JsonSchema } from './schema.js'

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
  readonly policy?: Partial<Record<Channel, Policy>>
  /** One human sentence for the approval request, e.g. "unlock the front door". */
  describe?(args: A): string
  /**
   * The part of the arguments a remembered yes covers, e.g. `{ room }` for a light: a grant then
   * covers any brightness in that room. Without it a grant covers exactly these arguments.
   */
  grantPattern?(args: A): Record<string, unknown>
  /** Runs the tool. Returns what the model reads; throws when the tool failed. */
  call(ctx: CallContext, args: A): Promise<unknown>
}

/** What a model is told about a tool. */
export interface ToolDeclaration {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
}

export function declarationOf(tool: Tool): ToolDeclaration {
  return { name: tool.name, description: tool.description, parameters: tool.parameters }
}

/** The human sentence for a call: the tool's own, or a plain fallback. */
export function actionOf(tool: Tool, args: unknown): string {
  try {
    if (tool.describe) return tool.describe(args)
  } catch {
    // A describe() that throws must not block the approval; fall back to the plain form.
  }
  return `run ${tool.name}`
}
