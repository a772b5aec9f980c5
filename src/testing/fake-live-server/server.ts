import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import { silentLogger } from '../../core/logger.js'
import { LoopbackService } from '../loopback-service.js'
import { type ServerFrame, serverFrame, truncateReason, unknownModelReason } from './frames.js'
import {
  DEFAULT_MODELS,
  type FakeModel,
  type GenerateStep,
  handleRest,
  type RestRequest,
} from './rest.js'
import type { ReceivedFrame, Script, Step } from './script.js'
import { phrase } from './speech.js'

export interface FakeLiveServerOptions {
  /** The account's models, for `models.list` and for checking `setup.model`. */
  readonly models?: readonly FakeModel[]
  /** Connection n plays `scripts[n]` (or the function's answer); none: answer setup and idle. */
  readonly scripts?: readonly Script[] | ((conn: number, setup: Record<string, unknown>) => Script)
  /** Answers for `generateContent`, in order. */
  readonly generate?: readonly GenerateStep[]
  /** When set, requests and connections with another key are refused as the service does. */
  readonly apiKey?: string
  /** Refuse every session at its setup, as the service does a bad key or a spent quota. */
  readonly refuse?: 'key' | 'quota'
  /** Send JSON as binary WebSocket frames, as the service does (default true). */
  readonly binaryFrames?: boolean
  readonly port?: number
  readonly logger?: Logger
  /** Frames sent the moment a connection opens, before `setup` (the service never does this). */
  readonly beforeSetup?: readonly ServerFrame[]
  /**
   * `blocking`: the model says nothing while a call it made lacks its `toolResponse` (a sequential
   * model): a script's speech waits until then. `async` (default): the script plays as written.
   */
  readonly toolCalls?: 'async' | 'blocking'
}

export interface TimelineEntry {
  readonly conn: number
  readonly event: 'open' | 'setup' | 'close'
  readonly code?: number
}

/** One client connection, for pushing frames at it from a test. */
export class FakeConnection {
  readonly index: number
  setup: Record<string, unknown> | undefined
  #cursor = 0
  readonly #ws: WebSocket
  readonly #server: FakeLiveServer
  readonly #binary: boolean
  readonly #blocking: boolean
  /** Ids of the calls sent on this connection. */
  readonly #calls: string[] = []

  constructor(
    index: number,
    ws: WebSocket,
    server: FakeLiveServer,
    o: { binary: boolean; blocking: boolean },
  ) {
    this.index = index
    this.#ws = ws
    this.#server = server
    this.#binary = o.binary
    this.#blocking = o.blocking
  }

  get open(): boolean {
    return this.#ws.readyState === WebSocket.OPEN
  }

  /** Pretty-printed camelCase JSON, as the service writes it. */
  send(frame: ServerFrame, binary = this.#binary): void {
    if (!this.open) return
    for (const c of (frame.toolCall as { functionCalls?: { id?: string }[] } | undefined)
      ?.functionCalls ?? [])
      if (c.id !== undefined) this.#calls.push(c.id)
    const text = JSON.stringify(frame, null, 2)
    this.#ws.send(binary ? Buffer.from(text, 'utf8') : text, { binary })
  }

  sendRaw(data: string, binary = false): void {
    if (this.open) this.#ws.send(binary ? Buffer.from(data, 'utf8') : data, { binary })
  }

  close(code: number, reason = ''): void {
    this.#ws.close(code, truncateReason(reason))
  }

  /** No close frame: the client sees 1006, as when a network drops. */
  drop(): void {
    this.#ws.terminate()
  }

  // Shorthands named as the scripted FakeLiveLLM's, so a driver test can swap one for the other.

  /** What the user said, as the service's input transcription. */
  user(text: string): void {
    this.send(serverFrame.inputTranscription(text))
  }

  /** What the model says, as its output transcription. */
  model(text: string): void {
    this.send(serverFrame.outputTranscription(text))
  }

  /** `ms` of the model's 24 kHz speech (from the fixtures, repeated as needed), in 40 ms frames. */
  audio(ms: number): void {
    const src = phrase('hello').pcm
    const pcm = Buffer.alloc(Math.round((ms * 24_000) / 1000) * 2)
    for (let o = 0; o < pcm.length; o += src.length) src.copy(pcm, o)
    for (let o = 0; o < pcm.length; o += 1920)
      this.send(serverFrame.audio(pcm.subarray(o, o + 1920)))
  }

  toolCall(...calls: { id: string; name: string; args?: unknown }[]): void {
    this.send(serverFrame.toolCall(calls))
  }

  cancel(...ids: string[]): void {
    this.send(serverFrame.cancellation(ids))
  }

  interrupted(): void {
    this.send(serverFrame.interrupted())
  }

  generationComplete(): void {
    this.send(serverFrame.generationComplete())
  }

  turnComplete(): void {
    this.send(serverFrame.turnComplete())
  }

  goAway(timeLeftMs?: number): void {
    this.send(serverFrame.goAway(timeLeftMs === undefined ? null : `${timeLeftMs / 1000}s`))
  }

  handle(handle: string, resumable = true): void {
    this.send(serverFrame.resumption(handle, resumable))
  }

  /** Every function response received on this connection, in order, as sent. */
  get responses(): Record<string, unknown>[] {
    return this.#server.received
      .filter((f) => f.conn === this.index && f.key === 'toolResponse')
      .flatMap(
        (f) =>
          (f.frame.toolResponse as { functionResponses?: Record<string, unknown>[] })
            ?.functionResponses ?? [],
      )
  }

  #heardBytes = 0
  #heardScanned = 0

  /** How many bytes of microphone audio this connection has received (counted as they come). */
  heardBytes(): number {
    const all = this.#server.received
    for (; this.#heardScanned < all.length; this.#heardScanned++) {
      const f = all[this.#heardScanned] as ReceivedFrame
      if (f.conn !== this.index) continue
      const data = (f.frame.realtimeInput as { audio?: { data?: string } } | undefined)?.audio?.data
      // base64: 4 characters for 3 bytes, less its padding.
      if (typeof data === 'string') {
        this.#heardBytes +=
          (data.length * 3) / 4 - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0)
      }
    }
    return this.#heardBytes
  }

  /** Every byte of microphone audio received on this connection (16 kHz S16LE), in order. */
  heardAudio(): Buffer {
    const parts: Buffer[] = []
    for (const f of this.#server.received) {
      if (f.conn !== this.index) continue
      const data = (f.frame.realtimeInput as { audio?: { data?: string } } | undefined)?.audio?.data
      if (typeof data === 'string') parts.push(Buffer.from(data, 'base64'))
    }
    return Buffer.concat(parts)
  }

  /** True once every step of the script has been played (not when it stopped early on a close). */
  finished = false

  async play(steps: readonly Step[]): Promise<void> {
    for (const step of steps) {
      if (!this.open && !('delayMs' in step)) return
      await this.#step(step)
    }
    this.finished = true
  }

  async #step(step: Step): Promise<void> {
    if (this.#blocking && ('speak' in step || ('send' in step && 'serverContent' in step.send)))
      await this.#untilAnswered()
    if ('send' in step) this.send(step.send, step.binary)
    else if ('raw' in step) this.sendRaw(step.raw, step.binary)
    else if ('delayMs' in step) await sleep(step.delayMs)
    else if ('close' in step) this.close(step.close, step.reason)
    else if ('drop' in step) this.drop()
    else if ('waitFor' in step) await this.#waitFor(step.waitFor, step.timeoutMs ?? 5000)
    else if ('speak' in step) await this.#speak(step)
    else if ('transcribe' in step) await this.#transcribe(step)
    else if ('untilHeardMs' in step) await this.#heard(step.untilHeardMs, step.timeoutMs)
  }

  /** A sequential model: waits until every call made on this connection has its response. */
  async #untilAnswered(): Promise<void> {
    const waiting = () => {
      const answered = new Set(this.responses.map((r) => r.id))
      return this.#calls.some((id) => !answered.has(id))
    }
    while (this.open && waiting()) await sleep(5)
  }

  /** True once this connection has heard `ms` of audio; false (an error noted) at the timeout. */
  async #heard(ms: number, timeoutMs = 5000): Promise<boolean> {
    const bytes = Math.round((ms * 16_000) / 1000) * 2
    const deadline = Date.now() + timeoutMs
    while (this.open && this.heardBytes() < bytes) {
      if (Date.now() > deadline) {
        this.#server.errors.push(`conn ${this.index}: heard less than ${ms} ms of audio`)
        return false
      }
      await sleep(5)
    }
    return true
  }

  async #transcribe(step: Extract<Step, { transcribe: unknown }>): Promise<void> {
    if (!(await this.#heard(step.afterAudioMs ?? 0, step.timeoutMs))) return
    if (this.setup?.inputAudioTranscription === undefined) {
      this.#server.errors.push(`conn ${this.index}: input transcription not asked for in setup`)
      return
    }
    this.send(serverFrame.inputTranscription(step.transcribe))
  }

  async #speak(step: Extract<Step, { speak: unknown }>): Promise<void> {
    const p = typeof step.speak === 'string' ? phrase(step.speak) : undefined
    const pcm = p ? p.pcm : Buffer.from(step.speak as Uint8Array)
    const text = step.transcript === false ? undefined : (step.transcript ?? p?.text)
    const bytes = Math.max(2, Math.round(((step.chunkMs ?? 40) * 24_000) / 1000) * 2)
    const chunks = Math.ceil(pcm.length / bytes)
    // A space after the phrase, as the service's own pieces carry one: phrases in a row read as words.
    const words = text === undefined ? [] : `${text} `.split(/(?<=\s)/)
    for (let i = 0; i < chunks; i++) {
      const frame = serverFrame.audio(pcm.subarray(i * bytes, (i + 1) * bytes))
      // The transcription rides in the same frames as the audio, a few words at a time.
      const from = Math.floor((i * words.length) / chunks)
      const to = Math.floor(((i + 1) * words.length) / chunks)
      const piece = words.slice(from, to).join('')
      if (piece) {
        ;(frame.serverContent as Record<string, unknown>).outputTranscription = { text: piece }
      }
      this.send(frame)
      if (step.paceMs) await sleep(step.paceMs)
    }
  }

  async #waitFor(what: string | ((f: ReceivedFrame) => boolean), timeoutMs: number): Promise<void> {
    const match = typeof what === 'string' ? (f: ReceivedFrame) => f.key === what : what
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const mine = this.#server.received.filter((f) => f.conn === this.index)
      for (; this.#cursor < mine.length; this.#cursor++) {
        if (match(mine[this.#cursor] as ReceivedFrame)) {
          this.#cursor++
          return
        }
      }
      if (!this.open) return
      if (Date.now() > deadline) {
        this.#server.errors.push(`conn ${this.index}: waited ${timeoutMs} ms for ${String(what)}`)
        return
      }
      await sleep(5)
    }
  }
}

/**
 * A local stand-in for the Gemini Live service on `ws`, speaking its wire protocol: it waits for
 * `setup`, answers `setupComplete`, refuses unknown models with the service's 1008 close, plays a
 * script per connection, and records every client frame. It also answers the REST paths `doctor`
 * and the LLM adapter use. Point the SDK at it with `httpOptions.baseUrl = server.baseUrl`.
 */
export class FakeLiveServer {
  readonly received: ReceivedFrame[] = []
  readonly timeline: TimelineEntry[] = []
  readonly connections: FakeConnection[] = []
  readonly rest: RestRequest[] = []
  /** What went wrong inside scripts (a `waitFor` that timed out, a frame before setup). */
  readonly errors: string[] = []
  /** The upgrade URLs, as the SDK built them (the key is in there). */
  readonly urls: string[] = []
  /** Sessions refused at setup (changeable while running: a key replaced, a quota renewed). */
  refuse: 'key' | 'quota' | undefined
  readonly #host: LoopbackService
  readonly #options: FakeLiveServerOptions
  readonly #models: readonly FakeModel[]
  readonly #generate: GenerateStep[]
  readonly #log: Logger

  private constructor(options: FakeLiveServerOptions) {
    this.#options = options
    this.refuse = options.refuse
    this.#models = options.models ?? DEFAULT_MODELS
    this.#generate = [...(options.generate ?? [])]
    this.#log = (options.logger ?? silentLogger).child({ component: 'fake-live-server' })
    this.#host = new LoopbackService({
      name: 'fake live server',
      rest: (req, res) =>
        handleRest(req, res, {
          models: this.#models,
          generate: this.#generate,
          requests: this.rest,
          apiKey: options.apiKey,
        }),
      restFailed: (err, res) => {
        this.errors.push(`rest: ${errorText(err)}`)
        res.destroy()
      },
      upgrade: (req, socket, head) => this.#upgrade(req, socket, head),
    })
  }

  static async start(options: FakeLiveServerOptions = {}): Promise<FakeLiveServer> {
    const s = new FakeLiveServer(options)
    await s.#host.listen(options.port)
    return s
  }

  get port(): number {
    return this.#host.port
  }

  /** What to give the SDK as `httpOptions.baseUrl` (http, not ws: see gemini-live.md §3.2). */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.#host.port}`
  }

  /** Adds answers for `generateContent`. */
  queueGenerate(...steps: GenerateStep[]): void {
    this.#generate.push(...steps)
  }

  framesOf(key?: string, conn?: number): Record<string, unknown>[] {
    return this.received
      .filter(
        (f) => (key === undefined || f.key === key) && (conn === undefined || f.conn === conn),
      )
      .map((f) => f.frame)
  }

  /** Resolves once `check()` holds, re-checking on every frame, connection and close. */
  until<T>(check: () => T | undefined | false, timeoutMs = 3000): Promise<T> {
    return this.#host.until(check, timeoutMs)
  }

  waitForFrame(match: (f: ReceivedFrame) => boolean, timeoutMs?: number): Promise<ReceivedFrame> {
    return this.until(() => this.received.find(match), timeoutMs)
  }

  waitForConnection(n: number, timeoutMs?: number): Promise<FakeConnection> {
    return this.until(() => {
      const c = this.connections[n]
      return c?.setup ? c : undefined
    }, timeoutMs)
  }

  close(): Promise<void> {
    return this.#host.close()
  }

  #wake(): void {
    this.#host.wake()
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake')
    // The SDK's path starts with `//ws/` for a bare base URL: match the end, not the whole path.
    if (!/GenerativeService\.BidiGenerateContent(Constrained)?$/.test(url.pathname)) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n')
      return
    }
    this.urls.push(req.url ?? '')
    this.#host.wss.handleUpgrade(req, socket, head, (ws) => {
      const key = url.searchParams.get('key') ?? url.searchParams.get('access_token')
      this.#accept(ws, key)
    })
  }

  #accept(ws: WebSocket, key: string | null): void {
    const conn = new FakeConnection(this.connections.length, ws, this, {
      binary: this.#options.binaryFrames ?? true,
      blocking: this.#options.toolCalls === 'blocking',
    })
    this.connections.push(conn)
    this.timeline.push({ conn: conn.index, event: 'open' })
    this.#wake()
    ws.on('close', (code: number) => {
      this.timeline.push({ conn: conn.index, event: 'close', code })
      this.#wake()
    })
    ws.on('error', (err: Error) => this.#log.debug({ err: err.message }, 'fake live socket error'))
    for (const f of this.#options.beforeSetup ?? []) conn.send(f)
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data)
      let frame: Record<string, unknown>
      try {
        frame = JSON.parse(text) as Record<string, unknown>
      } catch {
        this.received.push({ conn: conn.index, key: '?', frame: { raw: text }, binary: isBinary })
        conn.close(1007, 'Invalid JSON payload received.')
        this.#wake()
        return
      }
      const keys = Object.keys(frame)
      this.received.push({ conn: conn.index, key: keys.join('+'), frame, binary: isBinary })
      if (!conn.setup) this.#onFirst(conn, frame, key)
      this.#wake()
    })
  }

  #onFirst(conn: FakeConnection, frame: Record<string, unknown>, key: string | null): void {
    const setup = frame.setup as Record<string, unknown> | undefined
    if (!setup || Object.keys(frame).length !== 1) {
      this.errors.push(`conn ${conn.index}: first frame was not setup`)
      conn.close(1007, 'Request contains an invalid argument.')
      return
    }
    conn.setup = setup
    this.timeline.push({ conn: conn.index, event: 'setup' })
    if (this.refuse === 'quota') {
      conn.close(
        1011,
        'You exceeded your current quota, please check your plan and billing details.',
      )
      return
    }
    if (
      this.refuse === 'key' ||
      (this.#options.apiKey !== undefined && key !== this.#options.apiKey)
    ) {
      conn.close(1008, 'API key not valid. Please pass a valid API key.')
      return
    }
    const model = String(setup.model ?? '')
    const known = this.#models.some(
      (m) => m.name === model && m.supportedGenerationMethods.includes('bidiGenerateContent'),
    )
    if (!known) {
      conn.close(1008, unknownModelReason(model))
      return
    }
    const s = this.#options.scripts
    const script: Script | undefined =
      typeof s === 'function' ? s(conn.index, setup) : s?.[conn.index]
    // The service speaks only after setup: a frame before it crashes the SDK (a TDZ bug).
    if ((script?.handshake ?? 'answer') === 'answer') conn.send(serverFrame.setupComplete())
    if (script) {
      conn.play(script.steps).catch((err: unknown) => this.errors.push(errorText(err)))
    }
  }
}
