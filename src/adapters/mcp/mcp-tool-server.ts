import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import {
  ServerFault,
  type ToolInfo,
  type ToolReply,
  type ToolServer,
} from '../../ports/tool-server.js'

export interface McpToolServerOptions {
  /** The server's Streamable HTTP endpoint, e.g. HA's stateless `http://host:8123/api/mcp`. */
  readonly url: string
  readonly token: () => string
  /** One request's limit (HA's own is 60 s). */
  readonly timeoutMs: number
  readonly version: string
  /** No Authorization header at all (a server on the LAN that wants none). */
  readonly anonymous?: boolean
}

/**
 * An MCP server over Streamable HTTP through the MCP client package, with a bearer token: listing
 * and calling its tools. A failed request drops the client and the next one connects afresh —
 * for HA's stateless endpoint (no session id, GET answers 405) that is all "HA restarted" needs.
 */
export class McpToolServer implements ToolServer {
  readonly #o: McpToolServerOptions
  #client: Promise<Client> | undefined

  constructor(options: McpToolServerOptions) {
    this.#o = options
  }

  async listTools(signal?: AbortSignal): Promise<ToolInfo[]> {
    return this.#use(async (c) => {
      const tools: ToolInfo[] = []
      let cursor: string | undefined
      // Paged in principle; HA answers in one page.
      for (let page = 0; page < 20; page++) {
        const res = await c.listTools(cursor ? { cursor } : undefined, this.#request(signal))
        for (const t of res.tools) {
          tools.push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema })
        }
        cursor = res.nextCursor
        if (!cursor) break
      }
      return tools
    })
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<ToolReply> {
    return this.#use(async (c) => {
      const res = await c.callTool({ name, arguments: args }, this.#request(signal))
      const content = Array.isArray(res.content) ? res.content : []
      const text = content
        .map((p) => (p && typeof p === 'object' && p.type === 'text' ? String(p.text) : ''))
        .join('\n')
      return { isError: res.isError === true, text }
    })
  }

  async close(): Promise<void> {
    const c = this.#client
    this.#client = undefined
    await c?.then((x) => x.close()).catch(() => {})
  }

  #request(signal?: AbortSignal) {
    return { timeout: this.#o.timeoutMs, ...(signal && { signal }) }
  }

  async #use<T>(run: (c: Client) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const connecting = this.#connect()
      try {
        return await run(await connecting)
      } catch (err) {
        // The failed client is dropped, not closed: another call may be using it right now, and
        // on a stateless endpoint an idle client holds nothing open.
        if (this.#client === connecting) this.#client = undefined
        // A kept-alive connection HA closed (it restarted): the request never reached it, so
        // one more try on a fresh connection is safe, even for a call that acts.
        if (attempt === 0 && staleConnection(err)) continue
        throw asFault(err)
      }
    }
  }

  #connect(): Promise<Client> {
    if (this.#client) return this.#client
    const transport = new StreamableHTTPClientTransport(
      new URL(this.#o.url),
      this.#o.anonymous ? {} : { authProvider: { token: async () => this.#o.token() } },
    )
    const client = new Client({ name: 'nocturn', version: this.#o.version })
    this.#client = client.connect(transport, { timeout: this.#o.timeoutMs }).then(() => client)
    return this.#client
  }
}

function staleConnection(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause
  return cause?.code === 'UND_ERR_SOCKET'
}

/** What the client threw, as a fault the speaker can name. */
function asFault(err: unknown): ServerFault {
  if (err instanceof ServerFault) return err
  const e = err as {
    name?: string
    message?: string
    code?: unknown
    status?: unknown
    cause?: unknown
  }
  const text = `${e?.name ?? ''} ${e?.message ?? String(err)}`
  const status =
    typeof e?.status === 'number' ? e.status : Number(/\b(4\d\d|5\d\d)\b/.exec(text)?.[1])
  if (status === 401 || status === 403 || /unauthori[sz]ed/i.test(text)) {
    return new ServerFault('unauthorized', 'the server refused the access token')
  }
  if (/timed? ?out|timeout/i.test(text))
    return new ServerFault('timeout', 'the server did not answer in time')
  if (
    /fetch failed|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|socket/i.test(
      `${text} ${String(e?.cause ?? '')}`,
    )
  ) {
    return new ServerFault('unreachable', 'the MCP endpoint could not be reached')
  }
  if (status >= 500) return new ServerFault('unreachable', `the server answered ${status}`)
  return new ServerFault('bad_answer', `the MCP endpoint: ${(e?.message ?? '').slice(0, 200)}`)
}
