import type { AudioOut } from '../ports/audio.js'
import type { Clock, TimerHandle } from '../ports/clock.js'

export interface SpeakingWatchDeps {
  readonly clock: Clock
  readonly speaker: AudioOut
  /** `speaking` changed (the LED shows it). */
  changed(): void
}

/**
 * Whether the speaker is playing, for the LED: on at the first model audio written, off once what
 * the speaker had queued has played out or been dropped. One timer at a time, armed for what is
 * queued — not one per chunk.
 */
export class SpeakingWatch {
  readonly #deps: SpeakingWatchDeps
  #speaking = false
  #timer: TimerHandle | undefined

  constructor(deps: SpeakingWatchDeps) {
    this.#deps = deps
  }

  get speaking(): boolean {
    return this.#speaking
  }

  /** Model audio was just written to the speaker. */
  wrote(): void {
    if (!this.#speaking) {
      this.#speaking = true
      this.#deps.changed()
    }
    if (!this.#timer) this.#arm()
  }

  /** Looks again now (after a drop). */
  check(): void {
    const playing = this.#deps.speaker.queuedMs() > 0
    if (playing && !this.#timer) this.#arm()
    // After a drop: a timer armed for the dropped audio would see the next reply end late.
    if (!playing && this.#timer) {
      this.#deps.clock.clearTimeout(this.#timer)
      this.#timer = undefined
    }
    if (playing !== this.#speaking) {
      this.#speaking = playing
      this.#deps.changed()
    }
  }

  /** At session end. */
  stop(): void {
    if (this.#timer) this.#deps.clock.clearTimeout(this.#timer)
  }

  #arm(): void {
    const left = this.#deps.speaker.queuedMs()
    this.#timer = this.#deps.clock.setTimeout(
      () => {
        this.#timer = undefined
        this.check()
      },
      Math.max(1, left),
    )
  }
}
