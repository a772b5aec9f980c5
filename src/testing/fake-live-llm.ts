import { NocturnError } from '../core/errors.js'
import type { DropReport } from '../ports/audio.js'
import type { Clock } from '../ports/clock.js'
import {
  LIVE_OUTPUT_RATE_HZ,
  type LiveCapabilities,
  type LiveEvents,
  type LiveLLM,
  type LiveSession,
  type LiveSetup,
  type LiveToolCall,
  type LiveToolResponse,
} from '../ports/live-llm.js'

/** What the client sent on one connection, in order. */
export type Sent =
  | { readonly kind: 'audio'; readonly bytes: number }
  | { readonly kind: 'endAudio' }
  | { readonly kind: 'respond'; readonly response: LiveToolResponse }

/** One step of a script; `wait` moves on the clock, everything else is emitted at once. */
export type FakeLiveStep =
  | { readonly wait: number }
  | { readonly audioMs: number }
  | { readonly user: string }
  | { readonly model: string }
  | { readonly toolCall: readonly LiveToolCall[] }
  | { readonly cancel: readonly string[] }
  | { readonly interrupted: true }
  | { readonly generationComplete: true }
  | { readonly turnComplete: true }
  | { readonly goAway: number | undefined }
  | { readonly handle: string; readonly resumable?: boolean }
  | { readonly drop: { readonly code: number; readonly reason: string } }
  /** Waits until the client has answered `id` (finally, unless `interim`). */
  | { readonly awaitResponse: string; readonly interim?: boolean }

/**
 * One connection of the fake model. The emitting methods play the provider; everything the
 * client does is recorded. It emits even after it was closed, on purpose: a real adapter can
 * deliver a late event, and the driver must ignore it.
 */
export class FakeLiveConnection implements LiveSession {
  readonly setup: LiveSetup
  readonly events: LiveEvents
  readonly sent: Sent[] = []
  closedBy?: 'client' | 'server'
  /** `close()` was called and its handshake has not finished yet. */
  closing = false
  /** The last microphone frame sent (not copied), to check what the echo gate let through. */
  lastAudio?: Uint8Array
  #audioBytes = 0
  #audioFrames = 0
  #waiters: { id: string; interim: boolean; resolve: () => void }[] = []

  readonly #closeLatency: { readonly ms: number; readonly clock: Clock } | undefined

  constructor(
    setup: LiveSetup,
    events: LiveEvents,
    closeLatency?: { readonly ms: number; readonly clock: Clock },
  ) {
    this.setup = setup
    this.events = events
    this.#closeLatency = closeLatency
  }

  // ---- what the client does (LiveSession) -------------------------------------------------

  /** Frames sent while not open (closing or closed): dropped, as the port says. */
  droppedAudio = 0
  /** The first byte of every frame sent while open, in order (a test's mic marks its frames). */
  readonly audioMarks: number[] = []

  /** Not open once `close()` was called or either side closed it (the port's contract). */
  #isOpen(): boolean {
    return this.closedBy === undefined && !this.closing
  }

  sendAudio(pcm: Uint8Array): void {
    if (!this.#isOpen()) {
      this.droppedAudio++
      return
    }
    this.#audioBytes += pcm.byteLength
    this.#audioFrames++
    // A copy, whatever the view: a frame is only lent for the call (ports/audio.ts).
    this.lastAudio = new Uint8Array(pcm)
    this.audioMarks.push(pcm[0] ?? 0)
    const last = this.sent.at(-1)
    // Consecutive frames fold into one entry, so a minute of audio is not 3000 records.
    if (last?.kind === 'audio')
      this.sent[this.sent.length - 1] = { kind: 'audio', bytes: last.bytes + pcm.byteLength }
    else this.sent.push({ kind: 'audio', bytes: pcm.byteLength })
  }

  endAudio(): void {
    if (!this.#isOpen()) return
    this.sent.push({ kind: 'endAudio' })
  }

  respond(response: LiveToolResponse): void {
    if (!this.#isOpen()) {
      throw new NocturnError(
        'NOC_ERR_LIVE_CLOSED',
        `the live connection is not open; the answer for call ${response.id} was not sent`,
      )
    }
    this.sent.push({ kind: 'respond', response })
    this.#waiters = this.#waiters.filter((w) => {
      const match = w.id === response.id && (w.interim || response.willContinue !== true)
      if (match) w.resolve()
      return !match
    })
  }

  /** Every cut the driver reported (barge-in, stop button), in order. */
  readonly cuts: DropReport[] = []

  playbackCut(report: DropReport): void {
    this.cuts.push(report)
  }

  async close(): Promise<void> {
    if (this.closedBy || this.closing) return
    const latency = this.#closeLatency
    if (latency && latency.ms > 0) {
      // A socket's closing handshake takes a while: nothing more is sent, but the far side may
      // still deliver events until it is done.
      this.closing = true
      await new Promise<void>((r) => latency.clock.setTimeout(r, latency.ms))
    }
    this.closedBy = 'client'
    this.events.closed({ code: 1000, reason: 'client closed', byClient: true })
  }

  // ---- what was recorded ------------------------------------------------------------------

  get audioBytes(): number {
    return this.#audioBytes
  }

  get audioFrames(): number {
    return this.#audioFrames
  }

  /** Every tool response sent on this connection, in order. */
  get responses(): LiveToolResponse[] {
    return this.sent.flatMap((s) => (s.kind === 'respond' ? [s.response] : []))
  }

  get closed(): boolean {
    return this.closedBy !== undefined
  }

  /** Resolves when `id` is answered (finally, or with any answer when `interim`). */
  response(id: string, interim = false): Promise<void> {
    const done = this.responses.some((r) => r.id === id && (interim || r.willContinue !== true))
    if (done) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push({ id, interim, resolve }))
  }

  // ---- what the provider does -------------------------------------------------------------

  /** `ms` of model speech (24 kHz S16LE), as one chunk. */
  audio(ms: number): void {
    this.events.audio(modelPcm(ms))
  }

  user(text: string): void {
    this.events.inputTranscription(text)
  }

  model(text: string): void {
    this.events.outputTranscription(text)
  }

  toolCall(...calls: LiveToolCall[]): void {
    this.events.toolCall(calls)
  }

  cancel(...ids: string[]): void {
    this.events.toolCallCancellation(ids)
  }

  interrupted(): void {
    this.events.interrupted()
  }

  generationComplete(): void {
    this.events.generationComplete()
  }

  turnComplete(): void {
    this.events.turnComplete()
  }

  goAway(timeLeftMs?: number): void {
    this.events.goAway(timeLeftMs)
  }

  handle(handle: string, resumable = true): void {
    this.events.resumptionUpdate(handle, resumable)
  }

  /** The far side closes the connection. */
  drop(code = 1011, reason = 'internal error'): void {
    if (this.closedBy) return
    this.closedBy = 'server'
    this.events.closed({ code, reason, byClient: false })
  }

  /** Plays a script; `wait` steps move on `clock`. */
  async play(steps: readonly FakeLiveStep[], clock: Clock): Promise<void> {
    for (const s of steps) {
      if ('wait' in s) await new Promise<void>((r) => clock.setTimeout(r, s.wait))
      else if ('audioMs' in s) this.audio(s.audioMs)
      else if ('user' in s) this.user(s.user)
      else if ('model' in s) this.model(s.model)
      else if ('toolCall' in s) this.events.toolCall(s.toolCall)
      else if ('cancel' in s) this.events.toolCallCancellation(s.cancel)
      else if ('interrupted' in s) this.interrupted()
      else if ('generationComplete' in s) this.generationComplete()
      else if ('turnComplete' in s) this.turnComplete()
      else if ('goAway' in s) this.goAway(s.goAway)
      else if ('handle' in s) this.handle(s.handle, s.resumable ?? true)
      else if ('drop' in s) this.drop(s.drop.code, s.drop.reason)
      else if ('awaitResponse' in s) await this.response(s.awaitResponse, s.interim ?? false)
    }
  }
}

export interface FakeLiveLLMOptions {
  readonly capabilities?: Partial<LiveCapabilities> | undefined
  /** Opens take this long on the clock (needs `clock`); 0 resolves at once. */
  readonly openLatencyMs?: number | undefined
  /** A client `close()` takes this long on the clock (needs `clock`). */
  readonly closeLatencyMs?: number | undefined
  readonly clock?: Clock
  /** Decides per open whether it fails: return an Error to reject it. */
  readonly failOpen?: ((setup: LiveSetup, attempt: number) => Error | undefined) | undefined
  /** Runs for every new connection, e.g. to play a script on it. */
  readonly onOpen?: ((conn: FakeLiveConnection) => void) | undefined
}

/**
 * A scripted LiveLLM for tests and the offline run: every `open` makes a FakeLiveConnection that
 * records what the client sent and lets the script play the provider.
 */
export class FakeLiveLLM implements LiveLLM {
  readonly capabilities: LiveCapabilities
  readonly connections: FakeLiveConnection[] = []
  /** Every setup passed to `open`, including those that failed. */
  readonly opens: LiveSetup[] = []
  readonly #options: FakeLiveLLMOptions

  constructor(options: FakeLiveLLMOptions = {}) {
    this.#options = options
    this.capabilities = {
      model: 'fake-live',
      asyncToolCalls: true,
      transcription: true,
      lateTranscription: false,
      resumption: true,
      ...options.capabilities,
    }
  }

  /** The newest connection. */
  get current(): FakeLiveConnection {
    const c = this.connections.at(-1)
    if (!c) throw new Error('no connection was opened')
    return c
  }

  async open(setup: LiveSetup, events: LiveEvents): Promise<LiveSession> {
    this.opens.push(setup)
    const { openLatencyMs = 0, clock } = this.#options
    if (openLatencyMs > 0) {
      if (!clock) throw new Error('openLatencyMs needs a clock')
      await new Promise<void>((r) => clock.setTimeout(r, openLatencyMs))
    }
    const failure = this.#options.failOpen?.(setup, this.opens.length)
    if (failure) throw failure
    const conn = new FakeLiveConnection(
      setup,
      events,
      clock && this.#options.closeLatencyMs
        ? { ms: this.#options.closeLatencyMs, clock }
        : undefined,
    )
    this.connections.push(conn)
    this.#options.onOpen?.(conn)
    return conn
  }
}

/**
 * Model speech of `ms` milliseconds at 24 kHz: a quiet square wave, never all zeros, so a test
 * can tell played speech from silence.
 */
export function modelPcm(ms: number): Uint8Array {
  const samples = Math.round((ms * LIVE_OUTPUT_RATE_HZ) / 1000)
  const pcm = new Uint8Array(samples * 2)
  const view = new DataView(pcm.buffer)
  for (let i = 0; i < samples; i++) view.setInt16(i * 2, (i >> 5) & 1 ? 1200 : -1200, true)
  return pcm
}
