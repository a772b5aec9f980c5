import type { WakeDetection } from './wake-word.js'

/** Why a session opened: someone spoke (`speech` mode), said the wake phrase, or pressed to talk. */
type OnsetCause = 'speech' | 'wake' | 'button'

/** One reason to open a session, with the audio from just before it. */
export interface Onset {
  readonly cause: OnsetCause
  /** Audio from before (and including) the onset, oldest first: sent first, so nothing is cut. */
  readonly preRoll: Uint8Array
  /** Capture time (ms) of the frame that decided it. */
  readonly atMs: number
  /** For a wake onset: what the detector heard (the second opinion checks for its phrase). */
  readonly wake?: WakeDetection
}

/**
 * OnsetSource: what opens a session. The session loop listens to one source; which one (the
 * speech detector, the wake stage, the button) is chosen once, at the edge, by `listen.mode`.
 * A source may go quiet after an onset until `rearm()`; a wake source keeps listening during a
 * session, and the loop reads a wake it tells then as a barge-in.
 */
export interface OnsetSource {
  /**
   * One microphone frame from the idle route (between sessions), lent for the call. Absent on a
   * source that hears elsewhere (the wake stage hears the raw microphone) or nothing (a button).
   */
  hear?(frame: Uint8Array, capturedAtMs: number): void
  /** Where onsets go; set once, before the microphone starts. */
  listen(listener: (onset: Onset) => void): void
  /**
   * A session closed or the mute was pressed: forget what was heard (rings, scoring in flight) and
   * listen for the next onset as strictly as when first created.
   */
  rearm(): void
  close(): Promise<void> | void
}
