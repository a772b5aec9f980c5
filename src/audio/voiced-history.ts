import { LIVE_INPUT_RATE_HZ } from '../ports/live-llm.js'
import { type VadMode, WebRtcVad } from './webrtc-vad.js'

const FRAME_MS = 20

/**
 * Which of the last few seconds of microphone audio were speech, 20 ms at a time, by WebRTC's
 * VAD, how loud each frame was and whether the speaker was playing then: the wake stage asks it
 * whether a detection came with a voice (a detector's false accept on a kettle or a door has
 * none) and whether that voice was louder than the speaker's own echo. Fixed memory: a capture
 * time, a flag pair and a power per frame kept.
 */
export class VoicedHistory {
  readonly #vad: WebRtcVad
  readonly #at: Float64Array
  readonly #voiced: Uint8Array
  readonly #echo: Uint8Array
  readonly #power: Float64Array
  #next = 0
  #lastVoicedAt = Number.NEGATIVE_INFINITY

  private constructor(vad: WebRtcVad, keepMs: number) {
    this.#vad = vad
    const n = Math.ceil(keepMs / FRAME_MS)
    this.#at = new Float64Array(n).fill(Number.NEGATIVE_INFINITY)
    this.#voiced = new Uint8Array(n)
    this.#echo = new Uint8Array(n)
    this.#power = new Float64Array(n)
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
    return new VoicedHistory(vad, options.keepMs ?? 5000)
  }

  /**
   * One lent frame (any multiple of 20 ms), when it was captured, and whether the speaker was
   * playing (or its echo still in the room) at the time.
   */
  push(frame: Uint8Array, capturedAtMs: number, speakerAudible = false): void {
    const step = this.#vad.frameBytes
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength)
    for (let o = 0, i = 0; o + step <= frame.byteLength; o += step, i++) {
      const k = this.#next
      this.#at[k] = capturedAtMs + i * FRAME_MS
      const voiced = this.#vad.isSpeech(frame.subarray(o, o + step))
      this.#voiced[k] = voiced ? 1 : 0
      if (voiced) this.#lastVoicedAt = this.#at[k] as number
      this.#echo[k] = speakerAudible ? 1 : 0
      let sum = 0
      for (let b = o; b + 1 < o + step; b += 2) {
        const x = view.getInt16(b, true)
        sum += x * x
      }
      this.#power[k] = sum / (step / 2)
      this.#next = (k + 1) % this.#at.length
    }
  }

  /**
   * Mean level (dBFS) of the frames captured from `fromMs` to `toMs`; with `echoOnly`, only of
   * those heard while the speaker played. Undefined when there are fewer than `minFrames`.
   */
  levelDb(fromMs: number, toMs: number, echoOnly = false, minFrames = 1): number | undefined {
    let sum = 0
    let n = 0
    for (let i = 0; i < this.#at.length; i++) {
      const at = this.#at[i] as number
      if (at < fromMs || at > toMs || (echoOnly && this.#echo[i] !== 1)) continue
      sum += this.#power[i] as number
      n++
    }
    if (n < minFrames) return undefined
    return 10 * Math.log10(sum / n / (32768 * 32768) + 1e-12)
  }

  /** Whether any frame captured at or after `fromMs` was speech. */
  voicedSince(fromMs: number): boolean {
    return this.#lastVoicedAt >= fromMs
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
