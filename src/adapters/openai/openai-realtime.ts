import type { OpenAIRealtimeWS } from 'openai/realtime/ws'
import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type {
  LiveCapabilities,
  LiveEvents,
  LiveLLM,
  LiveSession,
  LiveSetup,
} from '../../ports/live-llm.js'
import { connectionLogs } from '../live-support/connection-logs.js'
import { OpenAttempt } from '../live-support/open-attempt.js'
import {
  lookupOpenAICapabilities,
  type OpenAIModelCapabilities,
  openaiLiveCapabilities,
} from './capabilities.js'
import { openRealtimeSocket, redactKey } from './client.js'
import { RealtimeConnection } from './realtime-connection.js'
import { refusal } from './refusal.js'
import { historyItems, type SessionOptions, sessionConfig } from './session-config.js'

export interface OpenAIRealtimeOptions extends SessionOptions {
  readonly apiKey: string
  readonly model: string
  /** `http://127.0.0.1:PORT/v1` for the fake service; the real one when absent. */
  readonly baseUrl?: string | undefined
  readonly connectTimeoutMs?: number | undefined
  /** The service's session limit (the capability table's when absent) and the lead before it. */
  readonly sessionLimitMs?: number | undefined
  readonly sessionLimitLeadMs?: number | undefined
  readonly logger: Logger
  readonly clock: Clock
}

/**
 * LiveLLM over the OpenAI Realtime API (`openai/realtime/ws`). Each `open()` is one WebSocket:
 * `session.update` with the persona, audio formats, transcription and tools; for a fresh
 * connection the history's words as conversation items; `open()` resolves at `session.updated`.
 * There is no resumption: a connection that ends is followed by a fresh one that reads the
 * history (docs/openai.md, "Session limit").
 */
export class OpenAIRealtime implements LiveLLM {
  readonly capabilities: LiveCapabilities
  readonly #caps: OpenAIModelCapabilities
  readonly #o: OpenAIRealtimeOptions
  /** The next connection's log. */
  readonly #connectionLog: () => Logger

  constructor(o: OpenAIRealtimeOptions) {
    const lookup = lookupOpenAICapabilities(o.model)
    const who = { provider: 'OpenAI', component: 'openai-realtime', label: 'realtime' }
    this.#connectionLog = connectionLogs(o, who, lookup)
    this.#o = o
    this.#caps = lookup.capabilities
    this.capabilities = openaiLiveCapabilities(o.model)
  }

  async open(setup: LiveSetup, events: LiveEvents): Promise<LiveSession> {
    const log = this.#connectionLog()
    const { clock, apiKey, model } = this.#o
    const conn = new RealtimeConnection({
      events,
      logger: log,
      clock,
      asyncToolCalls: this.capabilities.asyncToolCalls,
      limit: {
        limitMs: this.#o.sessionLimitMs ?? this.#caps.sessionLimitMs,
        leadMs: this.#o.sessionLimitLeadMs ?? 60_000,
      },
    })
    let rt: OpenAIRealtimeWS
    try {
      rt = await openRealtimeSocket({ apiKey, model, baseUrl: this.#o.baseUrl })
    } catch (err) {
      throw new Error(redactKey(errorText(err), apiKey))
    }
    conn.attach(rt)
    const timeoutMs = this.#o.connectTimeoutMs ?? 10_000
    log.info(
      { tools: setup.tools.length, history: setup.history?.length ?? 0 },
      'realtime connecting',
    )

    const attempt = new OpenAttempt<LiveSession>(
      { clock, log, label: 'realtime', timeoutMs, conn },
      `the realtime service did not set the session up within ${timeoutMs} ms (network, or a wrong base URL?)`,
    )
    const ready = () => {
      if (attempt.settled) return
      conn.opened()
      attempt.succeed(conn)
      // After the caller's `await` has its session, not before.
      setImmediate(() => conn.release())
    }
    rt.on('event', (e: RealtimeServerEvent) => {
      if (!attempt.settled) {
        if (e.type === 'session.updated') ready()
        else if (e.type === 'error')
          attempt.fail(
            refusal(model, { code: e.error.code ?? e.error.type, message: e.error.message }),
          )
        return
      }
      conn.onEvent(e)
    })
    // Error events come as `event` too; this is the socket's own trouble (and keeps the SDK
    // from turning an error nobody listens to into an unhandled rejection).
    rt.on('error', (err) => {
      if (err.error) return
      const msg = redactKey(err.message, apiKey)
      if (!attempt.settled)
        attempt.fail(new NocturnError('NOC_ERR_LIVE_CLOSED', `realtime socket: ${msg}`))
      else log.warn({ event: 'realtime_socket_error', err: msg }, 'realtime socket error')
    })
    rt.socket.on('unexpected-response', (req, res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => {
        if (body.length < 2000) body += c
      })
      res.on('end', () => {
        attempt.fail(refusal(model, { status: res.statusCode ?? 0, body: redactKey(body, apiKey) }))
        req.destroy()
      })
    })
    rt.socket.on('open', () => {
      const config = sessionConfig(setup, this.#o)
      conn.sendSetup({ type: 'session.update', event_id: 'nocturn_setup', session: config })
      for (const item of historyItems(setup.history ?? [])) {
        conn.sendSetup({ type: 'conversation.item.create', item })
      }
    })
    rt.socket.on('close', (code: number, reason: Buffer) => {
      const why = reason.toString('utf8')
      if (!attempt.settled) {
        attempt.fail(
          new NocturnError(
            'NOC_ERR_LIVE_CLOSED',
            `the realtime connection closed before its setup completed (close ${code})${why ? `: "${why}"` : ''}`,
          ),
        )
      }
      conn.onClosed(code, why)
    })
    return attempt.promise
  }
}
