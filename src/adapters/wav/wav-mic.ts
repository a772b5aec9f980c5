import { readFile } from 'node:fs/promises'
import { bytesForMs } from '../../audio/pcm.js'
import { parseWav } from '../../audio/wav.js'
import type { AudioIn, AudioInSink } from '../../ports/audio.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'
import { LIVE_INPUT_RATE_HZ } from '../../ports/live-llm.js'

export interface WavMicOptions {
  readonly path: string
  readonly clock: Clock
  readonly sampleRateHz?: number
  readonly frameMs?: number
  /** Deliver one frame per frame-duration of clock time, like a real microphone. */
  readonly paced?: boolean | undefined
  /** Start again from the beginning at the end (paced only, or it would never yield). */
  readonly loop?: boolean | undefined
  /** Called once the file has been delivered completely (not when looping). */
  readonly onEnd?: () => void
}

/**
 * A microphone that plays a WAV file: for the offline run and tests. The file must be 16 kHz (a
 * clear error names the sox command that converts it); channels and sample width are converted.
 * Unpaced, frames are delivered as fast as the event loop allows, a batch per turn.
 */
export class WavMic implements AudioIn {
  readonly sampleRateHz: number
  readonly #options: WavMicOptions
  #timer: TimerHandle | undefined
  #immediate: NodeJS.Immediate | undefined
  #running = false

  constructor(options: WavMicOptions) {
    this.#options = options
    this.sampleRateHz = options.sampleRateHz ?? LIVE_INPUT_RATE_HZ
  }

  async start(sink: AudioInSink): Promise<void> {
    await this.stop()
    const { pcm } = parseWav(
      await readFile(this.#options.path),
      this.sampleRateHz,
      this.#options.path,
    )
    const frameMs = this.#options.frameMs ?? 20
    const frameBytes = bytesForMs(this.sampleRateHz, frameMs)
    const clock = this.#options.clock
    const startAt = clock.now()
    let at = 0
    let sent = 0
    this.#running = true
    const next = (): boolean => {
      if (at + frameBytes > pcm.byteLength) {
        if (!this.#options.loop || pcm.byteLength < frameBytes) {
          this.#running = false
          this.#options.onEnd?.()
          return false
        }
        at = 0
      }
      // Timestamps follow the file, not the event loop, so unpaced runs still look like real time.
      sink.frame(pcm.subarray(at, at + frameBytes), startAt + sent * frameMs)
      at += frameBytes
      sent++
      return true
    }
    if (this.#options.paced) {
      const tick = () => {
        this.#timer = undefined
        if (!this.#running) return
        // Catch up on frames whose time has come, so timer lateness does not slow the stream.
        while (this.#running && startAt + sent * frameMs <= clock.now()) if (!next()) return
        if (this.#running) {
          this.#timer = clock.setTimeout(tick, startAt + sent * frameMs - clock.now())
        }
      }
      tick()
    } else {
      const batch = () => {
        this.#immediate = undefined
        for (let i = 0; i < 50 && this.#running; i++) if (!next()) return
        if (this.#running) this.#immediate = setImmediate(batch)
      }
      this.#immediate = setImmediate(batch)
    }
  }

  async stop(): Promise<void> {
    this.#running = false
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer)
    if (this.#immediate) clearImmediate(this.#immediate)
    this.#timer = undefined
    this.#immediate = undefined
  }
}
