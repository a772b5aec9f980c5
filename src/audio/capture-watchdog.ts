import { Backoff } from '../core/backoff.js'
import { errorText, NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { AudioIn, AudioInSink } from '../ports/audio.js'
import { type Clock, monotonicNow, type TimerHandle } from '../ports/clock.js'

export interface CaptureWatchdogOptions {
  readonly source: AudioIn
  readonly clock: Clock
  /** Silence from the device (no frames at all, not quiet frames) for this long is a stall. */
  readonly stallMs?: number
  /** For the message: which device stalled. */
  readonly deviceName: string
  readonly logger: Logger
}

const DEFAULT_STALL_MS = 3000
/** A device that stays dead is retried ever less often: 3, 6, 12, 24, then every 48 s. */
const MAX_STALL_FACTOR = 16

/**
 * An AudioIn decorator that notices a capture device delivering nothing — an unplugged USB mic
 * whose `arecord` hangs instead of exiting, a PortAudio stream stuck in its callback — reports it
 * through the sink, and restarts the source. It checks on a timer of its own rather than per frame
 * so the frame path only stores a timestamp.
 *
 * Silence counts only up to when a check was due, not when it ran: a check that runs late ran
 * after the event loop itself was held (a CPU quota's throttling on a loaded board), and the frames
 * of that hold are still waiting unread — idle, the microphone is read in bursts by a timer of its
 * own (ReadCadence), which fires beside this check and reads only in the loop's next turn. Counted
 * to the check's run, a 3 s hold of the loop was a "stalled" microphone, restarted. A device that is
 * really dead is still seen, one check later: its silence up to that check's due time is as long.
 * The clock's monotonic reading, so a wall clock stepped (NTP on a board without a battery-backed
 * clock) is no silence either.
 */
export class CaptureWatchdog implements AudioIn {
  readonly #options: CaptureWatchdogOptions
  readonly #stallMs: number
  #lastFrameAt = 0
  #timer: TimerHandle | undefined
  /** When the armed check is due (monotonic): silence is counted up to it (see the class). */
  #checkDueAt = 0
  #inner: AudioInSink | undefined
  #restarting = false
  /** How much silence counts as a stall: grows with each restart, reset by a frame. */
  readonly #stallLimit: Backoff

  constructor(options: CaptureWatchdogOptions) {
    this.#options = options
    this.#stallMs = options.stallMs ?? DEFAULT_STALL_MS
    this.#stallLimit = new Backoff({
      initialMs: this.#stallMs,
      maxMs: this.#stallMs * MAX_STALL_FACTOR,
    })
  }

  get sampleRateHz(): number {
    return this.#options.source.sampleRateHz
  }

  async start(sink: AudioInSink): Promise<void> {
    const clock = this.#options.clock
    this.#inner = {
      frame: (pcm, at) => {
        this.#lastFrameAt = monotonicNow(clock)
        this.#stallLimit.reset()
        sink.frame(pcm, at)
      },
      error: (e, recoverable) => sink.error(e, recoverable),
    }
    this.#lastFrameAt = monotonicNow(clock)
    await this.#options.source.start(this.#inner)
    this.#arm(sink)
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#inner = undefined
    await this.#options.source.stop()
  }

  #arm(sink: AudioInSink): void {
    this.#checkDueAt = monotonicNow(this.#options.clock) + this.#stallMs / 2
    this.#timer = this.#options.clock.setTimeout(() => this.#check(sink), this.#stallMs / 2)
  }

  #check(sink: AudioInSink): void {
    this.#timer = undefined
    const inner = this.#inner
    if (!inner) return
    const now = monotonicNow(this.#options.clock)
    const silentMs = Math.min(now, this.#checkDueAt) - this.#lastFrameAt
    if (silentMs >= this.#stallLimit.peek() && !this.#restarting) {
      this.#stallLimit.next()
      const error = new NocturnError(
        'NOC_ERR_AUDIO_STALLED',
        `capture device "${this.#options.deviceName}" delivered no audio for ${Math.round(silentMs)} ms; restarting it`,
      )
      this.#options.logger.warn(
        {
          event: 'audio_capture_stalled',
          device: this.#options.deviceName,
          silentMs,
          checkLateMs: Math.round(now - this.#checkDueAt),
        },
        'audio capture stalled',
      )
      sink.error(error, true)
      this.#restarting = true
      this.#lastFrameAt = now
      void this.#options.source
        .stop()
        .then(() => (this.#inner === inner ? this.#options.source.start(inner) : undefined))
        .catch((e: unknown) => sink.error(e instanceof Error ? e : new Error(errorText(e)), false))
        .finally(() => {
          this.#restarting = false
        })
    }
    this.#arm(sink)
  }
}
