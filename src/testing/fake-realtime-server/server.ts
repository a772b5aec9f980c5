import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type WebSocket from 'ws'
import { errorText } from '../../core/errors.js'
import { phrase } from '../fake-live-server/speech.js'
import { LoopbackService } from '../loopback-service.js'
import { type ClientEvent, FakeRealtimeConnection } from './connection.js'
import type { Reply } from './response.js'

/** The account's models, as `GET /v1/models` lists them. */
const DEFAULT_MODELS = [
  'gpt-realtime',
  'gpt-realtime-2',
  'gpt-realtime-mini',
  'gpt-4o-realtime-preview-2025-06-03',
  'gpt-4.1-mini',
  'gpt-4o-mini-tts',
  'gpt-4o-mini-transcribe',
]

type ChatStep = ChatAnswer | ((body: Record<string, unknown>) => ChatAnswer)

/** One typed-chat answer (`POST /v1/chat/completions`). */
export interface ChatAnswer {
  readonly text?: string
  readonly calls?: readonly {
    readonly id?: string
    readonly name: string
    readonly args?: unknown
  }[]
}

export interface FakeRealtimeServerOptions {
  readonly models?: readonly string[]
  /** When set, a connection or request with another key is refused with 401, as the service does. */
  readonly apiKey?: string
  /** Refuse every connection and request with this status (quota spent, key revoked, region). */
  readonly refuse?: 401 | 403 | 429 | 500
  /** `blocking`: the model says nothing while a function call lacks its output (a sequential model). */
  readonly toolCalls?: 'async' | 'blocking'
  /** Close each session after this long, with the service's `session_expired` error first. */
  readonly sessionLimitMs?: number
  /** What the model answers each connection's own `response.create`s with, in order. */
  readonly replies?: readonly Reply[]
  /** Answers for typed chats, in order; a function answers from the request's body. */
  readonly chat?: readonly ChatStep[]
  readonly port?: number
}

/** A REST request as received (the key is never recorded). */
export interface FakeRestRequest {
  readonly method: string
  readonly path: string
  readonly body: Record<string, unknown> | undefined
}

const STATUS_TEXT: Record<number, { code: string; message: string }> = {
  401: { code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: {
    code: 'unsupported_country_region_territory',
    message: 'Country, region, or territory not supported',
  },
  429: {
    code: 'insufficient_quota',
    message: 'You exceeded your current quota, please check your plan and billing details.',
  },
  500: { code: 'server_error', message: 'The server had an error while processing your request.' },
}

/**
 * A local stand-in for the OpenAI Realtime service (and the REST paths the typed chat, speech and
 * doctor use), on `ws`, written from OpenAI's API reference. The SDK reaches it with
 * `baseURL: server.baseUrl` (the adapter makes the socket plain TCP for an `http:` base).
 */
export class FakeRealtimeServer {
  readonly connections: FakeRealtimeConnection[] = []
  readonly rest: FakeRestRequest[] = []
  /** Upgrade URLs, as the SDK built them. */
  readonly urls: string[] = []
  /** Connections refused, with the status sent. */
  readonly refused: number[] = []
  readonly #host: LoopbackService
  readonly #o: FakeRealtimeServerOptions
  readonly #chat: ChatStep[]

  private constructor(o: FakeRealtimeServerOptions) {
    this.#o = o
    this.#chat = [...(o.chat ?? [])]
    this.#host = new LoopbackService({
      name: 'fake realtime server',
      rest: (req, res) => this.#rest(req, res),
      restFailed: (err, res) => {
        res.statusCode = 500
        res.end(errorText(err))
      },
      upgrade: (req, socket, head) => this.#upgrade(req, socket, head),
    })
  }

  static async start(o: FakeRealtimeServerOptions = {}): Promise<FakeRealtimeServer> {
    const s = new FakeRealtimeServer(o)
    await s.#host.listen(o.port)
    return s
  }

  /** What to give the SDK as `baseURL`. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.#host.port}/v1`
  }

  queueChat(...answers: ChatAnswer[]): void {
    this.#chat.push(...answers)
  }

  /** Resolves once `check()` holds, re-checking on every event and connection. */
  until<T>(check: () => T | undefined | false, timeoutMs = 3000): Promise<T> {
    return this.#host.until(check, timeoutMs)
  }

  /** Connection `n` once its session was set up by the client. */
  waitForConnection(n: number, timeoutMs?: number): Promise<FakeRealtimeConnection> {
    return this.until(() => {
      const c = this.connections[n]
      return c && c.eventsOf('session.update').length > 0 ? c : undefined
    }, timeoutMs)
  }

  close(): Promise<void> {
    return this.#host.close()
  }

  #wake(): void {
    this.#host.wake()
  }

  /** The status a request with this Authorization header gets, or undefined to serve it. */
  #refusal(auth: string | undefined): number | undefined {
    if (this.#o.refuse) return this.#o.refuse
    if (this.#o.apiKey !== undefined && auth !== `Bearer ${this.#o.apiKey}`) return 401
    return undefined
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake')
    if (url.pathname !== '/v1/realtime') {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n')
      return
    }
    this.urls.push(req.url ?? '')
    const status = this.#refusal(req.headers.authorization)
    if (status !== undefined) {
      this.refused.push(status)
      const body = JSON.stringify({
        error: { type: 'invalid_request_error', ...STATUS_TEXT[status] },
      })
      socket.end(
        `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
      this.#wake()
      return
    }
    this.#host.wss.handleUpgrade(req, socket, head, (ws) =>
      this.#accept(ws, url.searchParams.get('model') ?? ''),
    )
  }

  #accept(ws: WebSocket, model: string): void {
    const conn = new FakeRealtimeConnection(this.connections.length, ws, {
      blocking: this.#o.toolCalls === 'blocking',
      wake: () => this.#wake(),
    })
    conn.replies.push(...(this.#o.replies ?? []))
    this.connections.push(conn)
    ws.on('close', () => this.#wake())
    ws.on('error', () => {})
    const models = this.#o.models ?? DEFAULT_MODELS
    if (!models.includes(model)) {
      conn.send({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          code: 'model_not_found',
          message: `The model '${model}' does not exist or you do not have access to it.`,
          param: null,
          event_id: null,
        },
      })
      conn.close(1008, 'model_not_found')
      return
    }
    conn.session = {
      type: 'realtime',
      model,
      instructions: '',
      tools: [],
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: 24000 },
          transcription: null,
          turn_detection: { type: 'server_vad' },
        },
        output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'alloy' },
      },
    }
    conn.send({ type: 'session.created', session: conn.session })
    ws.on('message', (data: WebSocket.RawData) => {
      let e: ClientEvent
      try {
        e = JSON.parse(String(data)) as ClientEvent
      } catch {
        conn.send({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            code: 'invalid_json',
            message: 'Invalid JSON',
            param: null,
            event_id: null,
          },
        })
        return
      }
      conn.onClientEvent(e)
      this.#wake()
    })
    const limit = this.#o.sessionLimitMs
    if (limit !== undefined) {
      const t = setTimeout(() => {
        conn.send({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            code: 'session_expired',
            message: `Your session hit the maximum duration of ${limit} ms.`,
            param: null,
            event_id: null,
          },
        })
        conn.close(1000, 'session expired')
      }, limit)
      ws.on('close', () => clearTimeout(t))
    }
    this.#wake()
  }

  async #rest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined
    const path = new URL(req.url ?? '/', 'http://fake').pathname
    this.rest.push({ method: req.method ?? 'GET', path, body })
    this.#wake()
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(v))
    }
    const status = this.#refusal(req.headers.authorization)
    if (status !== undefined) {
      json(status, { error: { type: 'invalid_request_error', ...STATUS_TEXT[status] } })
      return
    }
    if (req.method === 'GET' && path === '/v1/models') {
      json(200, {
        object: 'list',
        data: (this.#o.models ?? DEFAULT_MODELS).map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: 'system',
        })),
      })
      return
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      const step = this.#chat.shift() ?? { text: 'OK.' }
      const a = typeof step === 'function' ? step(body ?? {}) : step
      const calls = (a.calls ?? []).map((c, i) => ({
        id: c.id ?? `call_${i}`,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
      }))
      json(200, {
        id: 'chatcmpl_fake',
        object: 'chat.completion',
        created: 0,
        model: body?.model,
        choices: [
          {
            index: 0,
            finish_reason: calls.length ? 'tool_calls' : 'stop',
            message: {
              role: 'assistant',
              content: a.text ?? null,
              ...(calls.length ? { tool_calls: calls } : {}),
            },
          },
        ],
      })
      return
    }
    if (req.method === 'POST' && path === '/v1/audio/speech') {
      res.writeHead(200, { 'content-type': 'audio/pcm' })
      res.end(phrase('hello').pcm)
      return
    }
    json(404, {
      error: {
        type: 'invalid_request_error',
        code: 'unknown_url',
        message: `Unknown request URL: ${req.method} ${path}`,
      },
    })
  }
}
