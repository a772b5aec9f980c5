import { LIVE_INPUT_RATE_HZ } from '../ports/live-llm.js'
import { type VadMode, WebRtcVad } from './webrtc-vad.js'

const FRAME_MS = 20

/**
 * Which of the last few seconds of microphone audio were speech, 20 ms at a time, by WebRTC's
 * VAD: the wake stage asks it whether a detection came with a voice (a detector's false accept on
 * a kettle or a door has none). Fixed memory: one capture time and one flag per frame kept.
 */
export class VoicedHistory {
  readonly #vad: WebRtcVad
  readonly #at: Float64Array
  readonly #voiced: Uint8Array
  #next = 0

  private constructor(vad: WebRtcVad, keepMs: number) {
    this.#vad = vad
    const n = Math.ceil(keepMs / FRAME_MS)
    this.#at = new Float64Array(n).fill(Number.NEGATIVE_INFINITY)
    this.#voiced = new Uint8Array(n)
  }

  /** `mode` 2 by default: a voice at a few metres counts, steady hum does not. */
  static async create(
    options: { keepMs?: number; mode?: VadMode; sampleRateHz?: number } = {},
  ): Promise<VoicedHistory> {
    const vad = await WebRtcVad.create({
      sampleRateHz: options.sampleRateHz ?? LIVE_INPUT_RATE_HZ,
      frameMs: FRAME_MS,
      mode: options.mode ?? 2,
    })
    return new VoicedHistory(vad, options.keepMs ?? 3000)
  }

  /** One lent frame (any multiple of 20 ms) and when it was captured. */
  push(frame: Uint8Array, capturedAtMs: number): void {
    const step = this.#vad.frameBytes
    for (let o = 0, i = 0; o + step <= frame.byteLength; o += step, i++) {
      this.#at[this.#next] = capturedAtMs + i * FRAME_MS
      this.#voiced[this.#next] = this.#vad.isSpeech(frame.subarray(o, o + step)) ? 1 : 0
      this.#next = (this.#next + 1) % this.#at.length
    }
  }

  /** Milliseconds of speech among the frames captured from `fromMs` to `toMs` (both included). */
  voicedMs(fromMs: number, toMs: number): number {
    let n = 0
    for (let i = 0; i < this.#at.length; i++) {
      const at = this.#at[i] as number
      if (at >= fromMs && at <= toMs && this.#voiced[i] === 1) n++
    }
    return n * FRAME_MS
  }

  close(): void {
    this.#vad.close()
  }
}
