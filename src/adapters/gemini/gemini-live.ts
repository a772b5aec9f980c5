import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type { LiveCapabilities, LiveEvents, LiveLLM, LiveSetup } from '../../ports/live-llm.js'
import { connectionLogs } from '../live-support/connection-logs.js'
import { OpenAttempt } from '../live-support/open-attempt.js'
import { liveCapabilities, lookupCapabilities, type ModelCapabilities } from './capabilities.js'
import { createClient, installGuardedTransport } from './client.js'
import { closeError } from './close-error.js'
import { toTextTurns } from './contents.js'
import { behaviorFor, liveConnectConfig } from './live-config.js'
import { LiveConnection } from './live-connection.js'
import { redactKey } from './redact.js'
import { type GuardedSocket, loadWebSocket } from './socket.js'

export interface GeminiLiveOptions {
  readonly apiKey: string
  readonly model: string
  /** `http://127.0.0.1:PORT` for the fake server; the real service when absent. */
  readonly baseUrl?: string | undefined
  /** `connect()` never gives up by itself (SDK 2.32.0), so this does. */
  readonly connectTimeoutMs?: number | undefined
  readonly logger: Logger
  /** The connect deadline and each connection's close deadline run on it. */
  readonly clock: Clock
}

/**
 * LiveLLM over `@google/genai`'s `ai.live.connect`. Each `open()` is one WebSocket connection; the
 * voice driver decides when to resume (after `goAway` or a drop) by closing the old session and
 * opening a new one with the last resumption handle, which this sends as
 * `setup.sessionResumption.handle` — and then sends no history, because the server still has it.
 */
export class GeminiLive implements LiveLLM {
  readonly capabilities: LiveCapabilities
  readonly #caps: ModelCapabilities
  readonly #options: GeminiLiveOptions
  /** The next connection's log. */
  readonly #connectionLog: () => Logger

  constructor(options: GeminiLiveOptions) {
    const lookup = lookupCapabilities(options.model)
    const who = { provider: 'Gemini', component: 'gemini-live', label: 'live' }
    this.#connectionLog = connectionLogs(options, who, lookup)
    this.#options = options
    this.#caps = lookup.capabilities
    this.capabilities = liveCapabilities(options.model)
  }

  async open(setup: LiveSetup, events: LiveEvents): Promise<LiveConnection> {
    const log = this.#connectionLog()
    const caps = this.#caps
    const nonBlocking = behaviorFor(setup, caps) === 'NON_BLOCKING'
    const conn = new LiveConnection({
      events,
      logger: log,
      apiKey: this.#options.apiKey,
      capabilities: caps,
      nonBlocking,
      clock: this.#options.clock,
    })
    const [ai, WebSocket] = await Promise.all([
      createClient({ apiKey: this.#options.apiKey, baseUrl: this.#options.baseUrl }),
      loadWebSocket(),
    ])
    const timeoutMs = this.#options.connectTimeoutMs ?? 10_000
    const clock = this.#options.clock
    log.info(
      { resume: setup.resumeHandle !== undefined, tools: setup.tools.length, nonBlocking },
      'live connecting',
    )

    const attempt = new OpenAttempt<LiveConnection>(
      { clock, log, label: 'live', timeoutMs, conn },
      `the live service did not complete setup within ${timeoutMs} ms (network, or a wrong base URL?)`,
    )
    try {
      installGuardedTransport(ai, {
        WebSocket,
        logger: log,
        apiKey: this.#options.apiKey,
        onSocket: (s: GuardedSocket) => conn.attachSocket(s),
        hooks: {
          frame: (f) => conn.onFrame(f),
          closed: (code, reason) => {
            // Before setupComplete the SDK would wait forever: the close is the answer.
            if (!attempt.settled) attempt.fail(closeError(code, reason, this.#options.model))
            conn.onClosed(code, reason)
          },
        },
      })
    } catch (err) {
      attempt.fail(err as Error)
      return attempt.promise
    }
    ai.live
      .connect({
        model: this.#options.model,
        config: liveConnectConfig(setup, caps),
        // Frames reach us through the guarded socket; the SDK only sees setupComplete.
        callbacks: { onmessage: () => {} },
      })
      .then(
        (sdk) => {
          if (attempt.settled) {
            sdk.conn.close()
            return
          }
          conn.opened(sdk)
          if (!setup.resumeHandle && setup.history?.length) {
            const turns = toTextTurns(setup.history)
            if (turns.length > 0) sdk.sendClientContent({ turns, turnComplete: false })
          }
          attempt.succeed(conn)
          // After the caller's `await` has its session, not before.
          setImmediate(() => conn.release())
        },
        (err: unknown) => attempt.fail(new Error(redactKey(errorText(err), this.#options.apiKey))),
      )
    return attempt.promise
  }
}
