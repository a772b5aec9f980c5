import type { ToolOutcome } from './conversation.js'
import { errorText, isNocturnError } from './errors.js'
import { gated } from './gate.js'
import { validate } from './schema.js'
import { declarationOf, type ToolDeclaration } from './tool.js'
import type { CallContext, Tool } from './types.js'

/** Arguments larger than this are refused before validation: no tool needs 16 KiB of input. */
export const MAX_ARGS_BYTES = 16 * 1024

/**
 * ToolSet: the tools by name, each behind the gate. `call` never throws: an unknown tool, bad
 * arguments, a denial or a failing tool all come back as an error outcome the model can read.
 */
export class ToolSet {
  readonly #tools = new Map<string, Tool>()
  readonly #gated = new Map<string, Tool>()
  /** Which source each tool came from: the built-ins, or a source replaced as a whole (a home). */
  readonly #sources = new Map<string, string>()

  constructor(tools: readonly Tool[] = []) {
    for (const t of tools) this.add(t)
  }

  add(tool: Tool, source = 'built-in'): this {
    if (this.#tools.has(tool.name)) throw new Error(`duplicate tool name: ${tool.name}`)
    this.#tools.set(tool.name, tool)
    this.#gated.set(tool.name, gated(tool))
    this.#sources.set(tool.name, source)
    return this
  }

  /**
   * Puts `tools` in place of every tool that came from `source` (a home's list after a refresh).
   * A name that another source holds is refused, not replaced — a home cannot shadow a built-in —
   * and returned, so the caller can say which.
   */
  replaceSource(source: string, tools: readonly Tool[]): string[] {
    for (const [name, from] of this.#sources) {
      if (from !== source) continue
      this.#tools.delete(name)
      this.#gated.delete(name)
      this.#sources.delete(name)
    }
    const refused: string[] = []
    for (const t of tools) {
      if (this.#tools.has(t.name)) refused.push(t.name)
      else this.add(t, source)
    }
    return refused
  }

  /** The tools as they are now: a session keeps the list it opened with through later refreshes. */
  snapshot(): ToolSet {
    const copy = new ToolSet()
    for (const [name, tool] of this.#tools) {
      copy.#tools.set(name, tool)
      copy.#gated.set(name, this.#gated.get(name) as Tool)
      copy.#sources.set(name, this.#sources.get(name) as string)
    }
    return copy
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name)
  }

  names(): string[] {
    return [...this.#tools.keys()]
  }

  declarations(): ToolDeclaration[] {
    return [...this.#tools.values()].map(declarationOf)
  }

  async call(ctx: CallContext, name: string, args: unknown): Promise<ToolOutcome> {
    const tool = this.#gated.get(name)
    if (!tool) {
      ctx.logger.warn(
        { event: 'unknown_tool_requested', tool: name.slice(0, 80) },
        'unknown tool requested',
      )
      return fail('NOC_ERR_UNKNOWN_TOOL', `There is no tool called "${name.slice(0, 80)}".`)
    }
    const size = argsSize(args)
    if (size > MAX_ARGS_BYTES) {
      return fail('NOC_ERR_ARGS_TOO_LARGE', `Arguments for ${name} are too large (${size} bytes).`)
    }
    const problems = validate(tool.parameters, args ?? {})
    if (problems.length > 0) {
      return fail('NOC_ERR_INVALID_ARGS', `Invalid arguments for ${name}: ${problems.join('; ')}`)
    }
    try {
      const value = await tool.call(ctx, args ?? {})
      return { ok: true, value: value ?? null }
    } catch (err) {
      if (isNocturnError(err)) return fail(err.code, err.message)
      if (ctx.signal.aborted) return fail('NOC_ERR_CANCELLED', 'the call was withdrawn')
      // What a foreign error says (a path, a host, a secret in a URL) stays in the device log.
      const message = errorText(err)
      ctx.logger.warn({ event: 'tool_failed', tool: name, err: message }, 'tool failed')
      return fail('NOC_ERR_TOOL_FAILED', `${name} failed on the speaker.`)
    }
  }
}

function fail(code: string, error: string): ToolOutcome {
  return { ok: false, code, error }
}

function argsSize(args: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(args ?? {}))
  } catch {
    return Number.POSITIVE_INFINITY // cyclic or otherwise unserialisable
  }
}
