import { LIVE_INPUT_RATE_HZ } from '../ports/live-llm.js'
import { bytesForMs } from './pcm.js'
import { PreRollRing } from './pre-roll.js'
import type { VadMode } from './webrtc-vad.js'
import { WebRtcVad } from './webrtc-vad.js'

export interface SpeechDetectorOptions {
  readonly sampleRateHz?: number
  /** WebRTC VAD aggressiveness; 3 keeps room noise and hum from opening sessions. */
  readonly mode?: VadMode
  /** Open when this many of the last `windowFrames` 20 ms frames are speech. */
  readonly triggerFrames?: number
  readonly windowFrames?: number
  readonly preRollMs?: number
  /**
   * Decisions are ignored this long after creation: WebRTC's VAD starts with no model of the
   * room, and its first frames of steady noise (a fan, mains hum) look like speech to it.
   */
  readonly warmupMs?: number
}

export interface SpeechOnset {
  /** Audio from before (and including) the trigger, oldest first: send this first. */
  readonly preRoll: Uint8Array
  /** Capture time of the frame that tipped the decision. */
  readonly triggeredAtMs: number
}

const VAD_FRAME_MS = 20

/**
 * Decides locally when someone starts talking, so a session opens only then and the room is not
 * streamed all day. Every 20 ms frame is classified by WebRTC's VAD; a session opens when
 * `triggerFrames` of the last `windowFrames` are speech (a lone click or a door is not enough).
 * Defaults (mode 3, 4 of 6 frames, 500 ms warm-up) open within ~100–200 ms of onset on the fixtures and never on
 * their silence and noise. Frames of any multiple of 20 ms are accepted.
 */
export class SpeechDetector {
  readonly #vad: WebRtcVad
  readonly #ring: PreRollRing
  readonly #window: Uint8Array
  readonly #trigger: number
  #pos = 0
  #voiced = 0
  #armed = true
  readonly #warmup: number
  #warmupFrames: number

  private constructor(vad: WebRtcVad, options: Required<SpeechDetectorOptions>) {
    this.#vad = vad
    this.#ring = new PreRollRing(bytesForMs(options.sampleRateHz, options.preRollMs))
    this.#window = new Uint8Array(options.windowFrames)
    this.#trigger = options.triggerFrames
    this.#warmup = Math.ceil(options.warmupMs / VAD_FRAME_MS)
    this.#warmupFrames = this.#warmup
  }

  static async create(options: SpeechDetectorOptions = {}): Promise<SpeechDetector> {
    const o: Required<SpeechDetectorOptions> = {
      sampleRateHz: options.sampleRateHz ?? LIVE_INPUT_RATE_HZ,
      mode: options.mode ?? 3,
      triggerFrames: options.triggerFrames ?? 4,
      windowFrames: options.windowFrames ?? 6,
      preRollMs: options.preRollMs ?? 500,
      warmupMs: options.warmupMs ?? 500,
    }
    const vad = await WebRtcVad.create({
      sampleRateHz: o.sampleRateHz,
      frameMs: VAD_FRAME_MS,
      mode: o.mode,
    })
    return new SpeechDetector(vad, o)
  }

  /**
   * Feeds one captured frame. Returns the onset when this frame opens a session, else undefined.
   * After an onset the detector stays quiet until `rearm()` (the session owns the microphone).
   */
  push(frame: Uint8Array, capturedAtMs: number): SpeechOnset | undefined {
    // After a gap (a mute: no frames come while muted) the voices counted before it are not this
    // speech, and the VAD's model is of the room as it was: forgotten, as after a session.
    if (this.#ring.push(frame, capturedAtMs)) this.#forgetVoices()
    if (!this.#armed) return undefined
    const step = this.#vad.frameBytes
    for (let at = 0; at + step <= frame.byteLength; at += step) {
      let speech = this.#vad.isSpeech(frame.subarray(at, at + step)) ? 1 : 0
      if (this.#warmupFrames > 0) {
        this.#warmupFrames--
        speech = 0
      }
      this.#voiced += speech - (this.#window[this.#pos] as number)
      this.#window[this.#pos] = speech
      this.#pos = (this.#pos + 1) % this.#window.length
      if (this.#voiced >= this.#trigger) {
        this.#armed = false
        return { preRoll: this.#ring.snapshot(), triggeredAtMs: capturedAtMs }
      }
    }
    return undefined
  }

  /**
   * Listen for the next onset (after a session closed), exactly as strict as when created: the
   * voice detector's models last adapted to the speech that opened the session, and the room may
   * have changed while the session held the microphone, so they are forgotten and the warm-up runs
   * again. Keeping them made the third frame after a session open the next one, on any noise.
   */
  rearm(): void {
    this.#forgetVoices()
    this.#ring.clear()
    this.#armed = true
  }

  #forgetVoices(): void {
    this.#vad.reset()
    this.#warmupFrames = this.#warmup
    this.#window.fill(0)
    this.#voiced = 0
    this.#pos = 0
  }

  close(): void {
    this.#vad.close()
  }
}
