import type { AudioIn, AudioInSink } from '../ports/audio.js'
import type { MicReads } from './read-cadence.js'

/** The microphone the router shares: mutable, and (the MicGate) with an echo gate to open. */
type RoutedMic = AudioIn & { setMuted(muted: boolean): void; hearNow?(passMs?: number): void }

/**
 * Idle, the microphone is read every 80 ms — the wake-word detector's chunk, so no chunk is later
 * for it — instead of every 20 ms frame: a quarter of the wake-ups (bench/RESULTS.md). The idle
 * listener may ask for longer bursts (`paceIdle`): the wake-word detector's batches.
 */
const IDLE_READ_MS = 80

/** Whether the microphone is hearing anything, and if not, why (for the LED and the status). */
export type MicHealth = { readonly ok: true } | { readonly ok: false; readonly reason: string }

/**
 * One microphone, two listeners: between sessions the local speech detector hears it; during a
 * session the voice driver does. The device runs continuously, so no audio is lost while a session
 * opens (restarting `arecord` would drop the syllables right after the trigger).
 *
 * It also keeps the microphone's health whoever listens: an error from the device (gone, stalled,
 * its recorder dying) makes it deaf, with the error as the reason, until frames arrive again —
 * told once per change to `onHealth`, so a dead device is not a line per retry.
 */
export class MicRouter {
  readonly #source: RoutedMic
  readonly #onHealth: ((h: MicHealth) => void) | undefined
  readonly #reads: MicReads | undefined
  #idle: AudioInSink | undefined
  #session: AudioInSink | undefined
  #started = false
  #deaf: string | undefined
  /** How the idle listener wants its frames: bursts of this many ms (`paceIdle`). */
  #idleMs = IDLE_READ_MS

  /**
   * `reads`: how often the device is read (ArecordMic's) — in bursts between sessions, each frame
   * as it comes during one (the model, a barge-in, the echo gate want it at once).
   */
  constructor(
    source: RoutedMic,
    options: { onHealth?: (h: MicHealth) => void; reads?: MicReads | undefined } = {},
  ) {
    this.#source = source
    this.#onHealth = options.onHealth
    this.#reads = options.reads
  }

  /** Starts the device (once) with frames going to `idle` whenever no session holds them. */
  async start(idle: AudioInSink): Promise<void> {
    this.#idle = idle
    if (this.#started) return
    this.#started = true
    if (!this.#session) this.#reads?.every(this.#idleMs)
    try {
      await this.#source.start({
        frame: (pcm, at) => {
          if (this.#deaf !== undefined) {
            this.#deaf = undefined
            this.#onHealth?.({ ok: true })
          }
          ;(this.#session ?? this.#idle)?.frame(pcm, at)
        },
        error: (e, recoverable) => {
          if (this.#deaf !== e.message) {
            this.#deaf = e.message
            this.#onHealth?.({ ok: false, reason: e.message })
          }
          ;(this.#session ?? this.#idle)?.error(e, recoverable)
        },
      })
    } catch (err) {
      this.#started = false
      throw err
    }
  }

  async stop(): Promise<void> {
    if (!this.#started) return
    this.#started = false
    this.#session = undefined
    await this.#source.stop()
  }

  /**
   * The idle listener takes its frames in batches of `ms`, the next complete once `nextMs` more
   * has come: between sessions the device is read in bursts ending there, so the process wakes
   * once a batch and no batch waits for a read. A session still reads each frame as it comes;
   * the pace applies again once it ends.
   */
  paceIdle(ms: number, nextMs?: number): void {
    this.#idleMs = Math.max(IDLE_READ_MS, ms)
    if (this.#started && !this.#session) this.#reads?.every(this.#idleMs, nextMs)
  }

  /** The microphone as a session sees it: starting and stopping only moves the route. */
  sessionMic(): AudioIn & { setMuted(muted: boolean): void; hearNow(passMs?: number): void } {
    const source = this.#source
    return {
      sampleRateHz: source.sampleRateHz,
      start: async (sink) => {
        this.#session = sink
        // At once: what waited for the idle burst is read now, in order, and goes to the session.
        this.#reads?.every(0)
      },
      stop: async () => {
        this.#session = undefined
        this.#reads?.every(this.#idleMs)
      },
      setMuted: (muted) => source.setMuted(muted),
      hearNow: (passMs) => source.hearNow?.(passMs),
    }
  }
}
