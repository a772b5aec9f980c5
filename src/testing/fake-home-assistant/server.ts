import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { WebSocketServer } from 'ws'
import { callAssistTool, listAssistTools, type ToolNaming } from './assist-tools.js'
import { FakeHouse } from './house.js'
import { serveSocket } from './websocket-api.js'

export interface FakeHomeAssistantOptions {
  readonly token: string
  readonly house?: FakeHouse
  readonly naming?: ToolNaming
  /** A port to listen on (a restart keeps it); any free one otherwise. */
  readonly port?: number
}

/** JSON-RPC requests HA's stateless endpoint answers (the MCP Python SDK's server methods). */
const PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18']

/**
 * A stand-in Home Assistant on loopback: the MCP server's stateless Streamable HTTP endpoint
 * (`POST /api/mcp`: one JSON-RPC message in, one `application/json` answer out; notifications
 * 202; GET 405; a bearer token or 401 — `components/mcp_server/http.py`) and the WebSocket API
 * (`/api/websocket`), over one house whose states change when a service runs. Faults as a test
 * needs them: `revokeToken()`, `slow(ms)`, `stop()` and `start()` again on the same port.
 */
export class FakeHomeAssistant {
  readonly house: FakeHouse
  naming: ToolNaming
  readonly version = '2026.11.2'
  /** Every MCP method received, in order (`tools/list`, `tools/call`…). */
  readonly mcpLog: { method: string; params?: unknown }[] = []
  /** Answers `tools/call` with this instead of running the tool (junk, a huge answer…). */
  junk: { text: string; isError?: boolean } | undefined
  #token: string
  #delayMs = 0
  #port: number
  #server: Server | undefined
  #wss: WebSocketServer | undefined
  readonly #sockets = new Set<Socket>()

  private constructor(o: FakeHomeAssistantOptions) {
    this.house = o.house ?? new FakeHouse()
    this.naming = o.naming ?? '2026.9'
    this.#token = o.token
    this.#port = o.port ?? 0
  }

  static async start(o: FakeHomeAssistantOptions): Promise<FakeHomeAssistant> {
    const ha = new FakeHomeAssistant(o)
    await ha.start()
    return ha
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`
  }

  /** The token stops working, as when its user removes it in HA: sockets using it are closed. */
  revokeToken(): void {
    this.#token = `revoked-${Math.random()}`
    for (const ws of this.#wss?.clients ?? []) ws.close(1008)
  }

  /** Every answer waits this long first. */
  slow(ms: number): void {
    this.#delayMs = ms
  }

  /** Listens (again, on the same port after a stop). */
  async start(): Promise<void> {
    const server = createServer((req, res) => void this.#http(req, res))
    const wss = new WebSocketServer({ noServer: true })
    server.on('connection', (s) => {
      this.#sockets.add(s)
      s.on('close', () => this.#sockets.delete(s))
    })
    server.on('upgrade', (req, socket, head) => {
      if (req.url !== '/api/websocket') {
        socket.destroy()
        return
      }
      wss.handleUpgrade(req, socket, head, (ws) =>
        serveSocket(ws, {
          house: this.house,
          version: this.version,
          tokenOk: (t) => t === this.#token,
          delayMs: () => this.#delayMs,
        }),
      )
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.#port, '127.0.0.1', () => resolve())
    })
    this.#port = (server.address() as AddressInfo).port
    this.#server = server
    this.#wss = wss
  }

  /** Goes away at once, every connection cut (HA stopped or restarting). */
  async stop(): Promise<void> {
    const server = this.#server
    if (!server) return
    this.#server = undefined
    for (const ws of this.#wss?.clients ?? []) ws.terminate()
    this.#wss?.close()
    for (const s of this.#sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  async #http(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0]
    if (path !== '/api/mcp') return end(res, 404, 'text/plain', '404: Not Found')
    if (req.headers.authorization !== `Bearer ${this.#token}`) {
      return end(res, 401, 'text/plain', '401: Unauthorized')
    }
    if (req.method !== 'POST') return end(res, 405, 'text/plain', '405: Method Not Allowed')
    if (!String(req.headers.accept ?? '').includes('application/json')) {
      return end(res, 400, 'text/plain', 'Client must accept application/json')
    }
    let body = ''
    for await (const chunk of req) body += chunk
    let msg: {
      jsonrpc?: string
      id?: string | number
      method?: string
      params?: Record<string, unknown>
    }
    try {
      msg = JSON.parse(body)
    } catch {
      return end(res, 400, 'text/plain', 'Request must be a JSON-RPC message')
    }
    if (this.#delayMs > 0) await new Promise((r) => setTimeout(r, this.#delayMs))
    if (msg.id === undefined) return end(res, 202, 'text/plain', '')
    this.mcpLog.push({ method: String(msg.method), ...(msg.params && { params: msg.params }) })
    const answer = (result: unknown) =>
      end(res, 200, 'application/json', JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }))
    switch (msg.method) {
      case 'initialize': {
        const asked = String(msg.params?.protocolVersion ?? '')
        return answer({
          protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS.at(-1),
          capabilities: {
            prompts: { listChanged: false },
            resources: { subscribe: false, listChanged: false },
            tools: { listChanged: false },
          },
          serverInfo: { name: 'home-assistant', version: this.version },
        })
      }
      case 'ping':
        return answer({})
      case 'tools/list':
        return answer({ tools: listAssistTools(this.house, this.naming) })
      case 'tools/call': {
        const p = msg.params ?? {}
        const out =
          this.junk ??
          callAssistTool(
            this.house,
            this.naming,
            String(p.name),
            (p.arguments ?? {}) as Record<string, unknown>,
          )
        return answer({
          content: [{ type: 'text', text: out.text }],
          isError: out.isError === true,
        })
      }
      default:
        return end(
          res,
          200,
          'application/json',
          JSON.stringify({
            jsonrpc: '2.0',
            id: msg.id,
            error: { code: -32601, message: 'Method not found', data: msg.method },
          }),
        )
    }
  }
}

function end(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type })
  res.end(body)
}
