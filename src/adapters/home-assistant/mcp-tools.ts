import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { HomeFault, type HomeToolInfo, type HomeToolReply } from '../../ports/home.js'

export interface HaMcpOptions {
  /** HA's stateless Streamable HTTP endpoint, `http://host:8123/api/mcp`. */
  readonly url: string
  readonly token: () => string
  /** One request's limit (HA's own is 60 s). */
  readonly timeoutMs: number
  readonly version: string
}

/**
 * HA's MCP server through the MCP client package: listing and calling the Assist tools. The
 * endpoint is stateless (no session id, GET answers 405), so a failed request drops the client
 * and the next one connects afresh — that is all "HA restarted" needs.
 */
export class HaMcp {
  readonly #o: HaMcpOptions
  #client: Promise<Client> | undefined

  constructor(options: HaMcpOptions) {
    this.#o = options
  }

  async listTools(signal?: AbortSignal): Promise<HomeToolInfo[]> {
    return this.#use(async (c) => {
      const tools: HomeToolInfo[] = []
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
  ): Promise<HomeToolReply> {
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
    const transport = new StreamableHTTPClientTransport(new URL(this.#o.url), {
      authProvider: { token: async () => this.#o.token() },
    })
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
function asFault(err: unknown): HomeFault {
  if (err instanceof HomeFault) return err
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
    return new HomeFault('unauthorized', 'Home Assistant refused the access token')
  }
  if (/timed? ?out|timeout/i.test(text))
    return new HomeFault('timeout', 'Home Assistant did not answer in time')
  if (
    /fetch failed|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|socket/i.test(
      `${text} ${String(e?.cause ?? '')}`,
    )
  ) {
    return new HomeFault('unreachable', "Home Assistant's MCP endpoint could not be reached")
  }
  if (status >= 500) return new HomeFault('unreachable', `Home Assistant answered ${status}`)
  return new HomeFault(
    'bad_answer',
    `Home Assistant's MCP endpoint: ${(e?.message ?? '').slice(0, 200)}`,
  )
}
