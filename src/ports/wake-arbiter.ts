import type { WakeDetection } from './wake-word.js'

/**
 * WakeArbiter: when several speakers in one home hear the same wake phrase, exactly one answers.
 * Each speaker that woke `claim`s the wake; the arbiter resolves, within a short window, whether
 * this speaker won (it opens the session) or another heard it better (it goes back to sleep).
 * A speaker with no broker, or whose broker is down, wins on its own: a claim never waits longer
 * than the window and never throws.
 */
export interface WakeArbiter {
  claim(detection: WakeDetection, signal?: AbortSignal): Promise<boolean>
  /**
   * The wake was said over this speaker's own session (a barge-in): it takes it at once, with
   * nothing to wait for, and tells the others, who yield to it. Never throws.
   */
  answering(detection: WakeDetection): void
  close(): Promise<void>
}
