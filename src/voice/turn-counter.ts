import type { Scheduling } from '../ports/live-llm.js'

/** What the counter saw, so the driver can log it. */
export type TurnSignal = 'user_speech' | 'model_output'

/**
 * Numbers the exchanges of a spoken session (docs/voice-driver.md, rule 4). A turn *starts* with the first sign of
 * a new exchange — the user's words or new model output — after the previous turn ended; a turn
 * ends at `turnComplete`, or early at `interrupted` (the model's generation is over either way).
 * A call remembers the turn current when it was made; the lateness of its answer, never its
 * outcome, decides how the answer is scheduled.
 */
export class TurnCounter {
  #current = 0
  #open = false

  /** The number of the current (or last) turn; 0 before anything happened. */
  get current(): number {
    return this.#current
  }

  /** True between a turn's start and its end. */
  get inTurn(): boolean {
    return this.#open
  }

  /** A sign of an exchange. Returns the new turn's number when this sign started one. */
  signal(_kind: TurnSignal): number | undefined {
    if (this.#open) return undefined
    this.#open = true
    this.#current++
    return this.#current
  }

  /** `turnComplete` (or `interrupted`). Returns false when no turn was open: a duplicate. */
  end(): boolean {
    if (!this.#open) return false
    this.#open = false
    return true
  }

  /** Turns that started after `turn`. */
  since(turn: number): number {
    return this.#current - turn
  }

  /**
   * No new turn since the call: they are still waiting, so cut in. One or more: they moved on,
   * so wait for a gap.
   */
  schedulingFor(turn: number): Scheduling {
    return this.since(turn) === 0 ? 'INTERRUPT' : 'WHEN_IDLE'
  }
}
