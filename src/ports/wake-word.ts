/**
 * WakeWordDetector: hears 16 kHz mono PCM frames and says, asynchronously, when one of its wake
 * phrases was spoken. `push` never waits for scoring: the detector keeps its own ring and scores
 * chunks in the background, so the audio path is never held up by inference.
 */
export interface WakeWordDetector {
  /** The phrases it listens for, as the household named them (e.g. "hey jarvis"). */
  readonly phrases: readonly string[]
  /**
   * One lent frame (valid only during the call) and when it was captured. `voiceNearby` false
   * says the speech detector heard no voice in the seconds around it, so no wake there could
   * stand: the detector may leave that audio unscored, but what it scores next must score as if
   * it had scored everything.
   */
  push(frame: Uint8Array, capturedAtMs: number, voiceNearby?: boolean): void
  /**
   * The score each phrase must reach from now on, in the order of `phrases`, each in (0, 1): the
   * household's sensitivity changed. Applies from the next chunk scored; nothing is reloaded.
   */
  setThresholds(thresholds: readonly number[]): void
  /** Forget what was heard (after a session, or after a refractory time). */
  reset(): void
  close(): Promise<void>
}

/** One detection: which phrase, how sure, and the capture time of the chunk that decided it. */
export interface WakeDetection {
  readonly phrase: string
  /** The head's score in 0–1. */
  readonly score: number
  /** Capture time (ms) of the end of the chunk whose score crossed the threshold. */
  readonly heardAtMs: number
  /** RMS level of the audio around the detection, in dBFS: how loud this speaker heard it. */
  readonly levelDb: number
}

export type WakeListener = (detection: WakeDetection) => void
