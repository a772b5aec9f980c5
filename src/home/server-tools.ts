import { errorText, NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { ToolSet } from '../core/tool-set.js'
import type { Channel, Policy, Tool } from '../core/types.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import { ServerFault, type ToolInfo, type ToolServer } from '../ports/tool-server.js'
import { fitSchema, fitsModelName } from './fit-schema.js'
import { homeFaultError, readToolReply } from './tool-reply.js'

type ChannelPolicies = Partial<Record<Channel, Policy | undefined>>

export interface ServerToolsOptions {
  /** The household's name for the server, e.g. "grocy": in logs, cards and the model's sentences. */
  readonly name: string
  readonly server: ToolServer
  readonly tools: ToolSet
  /** Every tool's policy unless `perTool` says otherwise; voice defaults to ask. */
  readonly policy: ChannelPolicies
  readonly perTool: Readonly<Record<string, ChannelPolicies>>
  readonly clock: Clock
  readonly logger: Logger
  readonly refreshMs: number
  readonly retryMs: number
}

/**
 * The tools of an MCP server the household added, in the ToolSet behind the same gate: voice asks
 * a phone by default (the speaker cannot tell what an unknown tool does), each tool's policy can be
 * set, and a name another tool already has is refused and logged. Listed at start, again on a
 * timer and soon after the server comes back; a failed listing keeps the last list.
 */
export class ServerTools {
  readonly #o: ServerToolsOptions
  #timer: TimerHandle | undefined
  #closed = false
  #ok: boolean | undefined

  constructor(options: ServerToolsOptions) {
    this.#o = options
  }

  /** Lists the server's tools now and puts them in the ToolSet; never throws. */
  async refresh(): Promise<{ ok: boolean; tools: number; refused: readonly string[] }> {
    const { server, tools, name, logger: log } = this.#o
    try {
      const all = await server.listTools()
      const listed = all.filter((t) => fitsModelName(t.name))
      if (listed.length < all.length) {
        log.warn(
          {
            event: 'mcp_tool_name_unfit',
            server: name,
            tools: all.filter((t) => !fitsModelName(t.name)).map((t) => t.name.slice(0, 80)),
          },
          'MCP tools left out: names a model does not accept',
        )
      }
      const refused = tools.replaceSource(
        `mcp:${name}`,
        listed.map((info) => this.#tool(info)),
      )
      if (refused.length > 0) {
        log.warn(
          { event: 'mcp_tool_name_taken', server: name, tools: refused },
          `tools of MCP server "${name}" left out: another tool already has the name`,
        )
      }
      this.#ok = true
      return { ok: true, tools: listed.length - refused.length, refused }
    } catch (err) {
      if (this.#ok !== false) {
        const kind = err instanceof ServerFault ? err.kind : 'bad_answer'
        log.warn(
          { event: `mcp_list_${kind}`, server: name, err: errorText(err) },
          'MCP tools not listed',
        )
      }
      this.#ok = false
      return { ok: false, tools: 0, refused: [] }
    }
  }

  async start(): Promise<void> {
    await this.refresh()
    this.#schedule()
  }

  close(): void {
    this.#closed = true
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer)
  }

  #schedule(): void {
    if (this.#closed) return
    this.#timer = this.#o.clock.setTimeout(
      () => void this.refresh().then(() => this.#schedule()),
      this.#ok ? this.#o.refreshMs : this.#o.retryMs,
    )
  }

  #tool(info: ToolInfo): Tool<Record<string, unknown>> {
    const { server, name: serverName } = this.#o
    const own = this.#o.perTool[info.name]
    // Unset stays unset: the tool's own word, then the server's, then voice asks.
    const policy: Record<Channel, Policy | undefined> = {
      voice: own?.voice ?? this.#o.policy.voice ?? 'ask',
      text: own?.text ?? this.#o.policy.text,
    }
    return {
      name: info.name,
      description: `${info.description || info.name} (from ${serverName})`.slice(0, 1000),
      parameters: fitSchema(info.inputSchema),
      policy,
      describe: (args) => `use ${info.name} on ${serverName} (${summarise(args)})`,
      call: async (ctx, args) => {
        const log = ctx.logger.child({ component: 'mcp', server: serverName })
        try {
          return readToolReply(
            await server.callTool(info.name, args ?? {}, ctx.signal),
            log,
            serverName,
          )
        } catch (err) {
          if (err instanceof NocturnError) throw err
          const fault =
            err instanceof ServerFault ? err : new ServerFault('bad_answer', errorText(err))
          log.warn({ event: `mcp_${fault.kind}`, err: errorText(err) }, 'MCP tool call failed')
          throw homeFaultError(fault, serverName)
        }
      },
    }
  }
}

function summarise(args: unknown): string {
  let text: string
  try {
    text = JSON.stringify(args ?? {})
  } catch {
    text = '?'
  }
  return text.length > 300 ? `${text.slice(0, 299)}…` : text
}
