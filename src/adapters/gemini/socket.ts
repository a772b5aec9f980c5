import type WebSocket from 'ws'
import type { Logger } from '../../core/logger.js'
import { redactKey } from './redact.js'

/** The `ws` package's WebSocket class. */
export type WebSocketClass = typeof WebSocket

/**
 * Loads `ws` on the first live connection (with the SDK, `client.ts`), not when the appliance
 * starts: a device that only listens has no use for it yet.
 */
export async function loadWebSocket(): Promise<WebSocketClass> {
  return (await import('ws')).default
}

/** The SDK's transport contract (`WebSocketFactory` / `WebSocket_2`), which it does not export. */
export interface SdkSocketCallbacks {
  onopen: () => void
  onmessage: (e: { data: unknown }) => void
  onerror: (e: unknown) => void
  onclose: (e: unknown) => void
}

export interface SdkSocket {
  connect(): void
  send(message: string): void
  close(): void
}

export interface SocketHooks {
  /** Every server frame that parsed as a JSON object, exactly once. */
  frame(frame: Record<string, unknown>): void
  closed(code: number, reason: string): void
}

interface GuardedSocketOptions {
  readonly WebSocket: WebSocketClass
  readonly url: string
  readonly headers: Record<string, string>
  /** The SDK's side of the transport: it sees `open`, errors, the close and `setupComplete`. */
  readonly sdk: SdkSocketCallbacks
  readonly hooks: SocketHooks
  readonly logger: Logger
  readonly apiKey: string
}

/**
 * The WebSocket under one live connection. It replaces the SDK's own transport for two reasons
 * found in the SDK's code (2.32.0, `handleWebSocketMessage`): a frame that is not JSON makes the
 * SDK's async handler reject with nobody listening, an unhandled rejection that ends a Node
 * process; and every frame would be parsed twice (once by the SDK, once here). So each frame is
 * parsed once here, bad ones are logged and dropped, and only `setupComplete` is passed on to the
 * SDK, which needs it to resolve `connect()`. Frames out still go through the SDK's own `send`.
 */
export class GuardedSocket implements SdkSocket {
  #ws: WebSocket | undefined
  #setupForwarded = false
  /** The SDK has sent its `setup` frame, so its `session` variable exists. */
  #setupSent = false
  /** A `setupComplete` that came before our `setup` went out (a misbehaving far side). */
  #earlySetupComplete: string | undefined
  /** A socket error (e.g. ECONNREFUSED) explains the 1006 close that follows it. */
  #lastError = ''
  readonly #o: GuardedSocketOptions

  constructor(options: GuardedSocketOptions) {
    this.#o = options
  }

  get isOpen(): boolean {
    return this.#ws?.readyState === this.#o.WebSocket.OPEN
  }

  connect(): void {
    // No client pings: Gemini's pongs were measured at 8–30 s, and a short pong timeout kills
    // healthy sessions (gemini-live.md §5.6); goAway and the close frame tell us enough.
    const ws = new this.#o.WebSocket(this.#o.url, { headers: this.#o.headers })
    this.#ws = ws
    ws.on('open', () => this.#o.sdk.onopen())
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) =>
      this.#onMessage(data, isBinary),
    )
    ws.on('error', (err: Error) => {
      this.#lastError = err.message
      this.#o.logger.warn(
        { event: 'live_socket_error', err: redactKey(err.message, this.#o.apiKey) },
        'live socket error',
      )
      this.#o.sdk.onerror({ message: redactKey(err.message, this.#o.apiKey) })
    })
    ws.on('close', (code: number, reason: Buffer) => {
      const text = redactKey(reason.toString('utf8') || this.#lastError, this.#o.apiKey)
      this.#o.hooks.closed(code, text)
      this.#o.sdk.onclose({ code, reason: text })
    })
  }

  send(message: string): void {
    if (!this.#ws || this.#ws.readyState !== this.#o.WebSocket.OPEN) {
      throw new Error('live socket is not open')
    }
    this.#ws.send(message)
    if (!this.#setupSent) {
      this.#setupSent = true
      const early = this.#earlySetupComplete
      this.#earlySetupComplete = undefined
      if (early) this.#o.sdk.onmessage({ data: early })
    }
  }

  close(): void {
    this.#ws?.close(1000)
  }

  /** Ends the socket without a closing handshake (a connect that failed or timed out). */
  terminate(): void {
    this.#ws?.terminate()
  }

  #onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.isBuffer(data)
        ? data.toString('utf8')
        : Buffer.from(data).toString('utf8')
    let frame: unknown
    try {
      frame = JSON.parse(text)
    } catch {
      this.#o.logger.warn(
        { event: 'frame_not_json', bytes: text.length, binary: isBinary },
        'live frame is not JSON; dropped',
      )
      return
    }
    if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
      this.#o.logger.warn(
        { event: 'frame_not_object', bytes: text.length },
        'live frame is not a JSON object; dropped',
      )
      return
    }
    const record = frame as Record<string, unknown>
    if (record.setupComplete !== undefined && !this.#setupForwarded) {
      this.#setupForwarded = true
      const data = JSON.stringify({ setupComplete: record.setupComplete })
      // Before the SDK has sent `setup`, its message handler reads a `session` constant that is
      // not yet initialised (a TDZ ReferenceError, an unhandled rejection): hold it until then.
      if (this.#setupSent) this.#o.sdk.onmessage({ data })
      else this.#earlySetupComplete = data
    }
    this.#o.hooks.frame(record)
  }
}
