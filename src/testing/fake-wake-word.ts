import type { WakeDetection, WakeListener, WakeWordDetector } from '../ports/wake-word.js'

/**
 * The bytes a test puts at the start of a frame to mean "the wake phrase ends here". Eight
 * particular bytes: real speech, a test's marked frames (one byte value throughout) or silence
 * never begin a frame with them.
 */
const WAKE_MARK = Uint8Array.from(Buffer.from('HEYJARVS', 'latin1'))

/** A 20 ms frame (640 bytes at 16 kHz) that the fake detector hears as the end of the wake phrase. */
export function wakeMarkFrame(bytes = 640): Uint8Array {
  const f = new Uint8Array(bytes)
  f.set(WAKE_MARK)
  return f
}

/**
 * A wake-word detector below the port, for tests of the listening chain: it fires on every frame
 * that starts with `WAKE_MARK`, or on the capture times it is given, and tells its listener
 * asynchronously (as a real one does after scoring), `latencyMs` later by the wall clock, unless
 * it is reset meanwhile.
 */
export class FakeWakeWord implements WakeWordDetector {
  readonly phrases: readonly string[]
  readonly #listener: WakeListener
  readonly #latencyMs: number
  readonly #at: number[]
  readonly #score: number
  readonly #levelDb: number
  /** Every frame pushed, counted: what the detector heard. */
  frames = 0
  /** For each frame pushed, whether it came with a voice nearby (the chain's hint). */
  readonly voiceNearby: boolean[] = []
  resets = 0
  /** Every setThresholds call, in order: what the sensitivity asked of the detector. */
  readonly thresholdsSet: (readonly number[])[] = []
  /** performance.now() at each detection told, just before the listener ran (for benchmarks). */
  readonly firedAt: number[] = []
  #closed = false
  #fireNext = false

  constructor(options: {
    listener: WakeListener
    phrase?: string
    latencyMs?: number
    /** Capture times (ms) at which it fires as well, whatever the audio. */
    at?: readonly number[]
    score?: number
    levelDb?: number
  }) {
    this.phrases = [options.phrase ?? 'hey jarvis']
    this.#listener = options.listener
    this.#latencyMs = options.latencyMs ?? 0
    this.#at = [...(options.at ?? [])].sort((a, b) => a - b)
    this.#score = options.score ?? 0.9
    this.#levelDb = options.levelDb ?? -30
  }

  push(frame: Uint8Array, capturedAtMs: number, voiceNearby = true): void {
    if (this.#closed) return
    this.frames++
    this.voiceNearby.push(voiceNearby)
    let fire =
      this.#fireNext ||
      (frame.byteLength >= WAKE_MARK.byteLength && WAKE_MARK.every((b, i) => frame[i] === b))
    this.#fireNext = false
    while (this.#at.length > 0 && (this.#at[0] as number) <= capturedAtMs) {
      this.#at.shift()
      fire = true
    }
    if (!fire) return
    const d: WakeDetection = {
      phrase: this.phrases[0] as string,
      score: this.#score,
      heardAtMs: capturedAtMs,
      levelDb: this.#levelDb,
    }
    const resets = this.resets
    setTimeout(() => {
      // As the real detector: a reset forgets what it was still scoring.
      if (this.#closed || resets !== this.resets) return
      this.firedAt.push(performance.now())
      this.#listener(d)
    }, this.#latencyMs)
  }

  /** Fires on the next frame pushed, whatever it holds: what a real detector's false accept does. */
  fireOnNextFrame(): void {
    this.#fireNext = true
  }

  setThresholds(thresholds: readonly number[]): void {
    this.thresholdsSet.push([...thresholds])
  }

  reset(): void {
    this.resets++
  }

  async close(): Promise<void> {
    this.#closed = true
  }
}
