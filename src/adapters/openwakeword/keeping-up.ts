import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'

/** Audio scored with no drop before the detector counts as keeping up again. */
const KEEP_UP_MS = 30_000

interface KeepingUpOptions {
  readonly logger: Logger
  /** For the log line: how many phrases, on which runtime, could not be scored in time. */
  readonly phrases: number
  readonly runtime: string
  /** Unscored audio kept while scoring catches up, for the log line of a drop. */
  readonly backlogMs: number
  readonly onKeepingUp?: ((keepingUp: boolean) => void) | undefined
}

/**
 * Whether the detector keeps up with the microphone: the chunks it dropped, said once per episode
 * of falling behind, and no chunk dropped in the last KEEP_UP_MS of audio. One drop turns it off
 * at once (with the fix in the log), and only that long without another turns it back on, so a
 * board at its limit does not flap between the two.
 */
export class KeepingUp {
  readonly #o: KeepingUpOptions
  #keepingUp = true
  #lastDropAt = 0
  #dropped = 0
  #droppedInEpisode = 0

  constructor(options: KeepingUpOptions) {
    this.#o = options
  }

  get keepingUp(): boolean {
    return this.#keepingUp
  }

  /** Chunks dropped unscored since the detector started. */
  get dropped(): number {
    return this.#dropped
  }

  /**
   * A chunk ending at `endAt` (audio time) was queued, `droppedChunks` of the oldest dropped for
   * it; `lagMs` is the latest scoring lag, for the log line.
   */
  note(droppedChunks: number, endAt: number, lagMs: number): void {
    const dropped = droppedChunks > 0
    if (dropped) {
      this.#dropped += droppedChunks
      const first = this.#droppedInEpisode === 0
      this.#droppedInEpisode += droppedChunks
      if (first) {
        this.#o.logger.warn(
          { event: 'wake_word_behind', backlogMs: this.#o.backlogMs, lagMs },
          'wake word scoring fell behind the microphone; dropping the oldest audio',
        )
      }
      this.#lastDropAt = endAt
    }
    if (dropped === !this.#keepingUp) return
    if (!dropped && endAt - this.#lastDropAt < KEEP_UP_MS) return
    this.#keepingUp = !dropped
    if (dropped) {
      this.#o.logger.warn(
        { event: 'wake_word_cannot_keep_up', phrases: this.#o.phrases, runtime: this.#o.runtime },
        'the wake word cannot keep up on this board: scoring sheds load, dropping the oldest audio',
      )
    } else {
      this.#o.logger.info({ event: 'wake_word_keeping_up' }, 'the wake word keeps up again')
    }
    try {
      this.#o.onKeepingUp?.(this.#keepingUp)
    } catch (err) {
      this.#o.logger.error(
        { event: 'wake_listener_failed', err: errorText(err) },
        'the keeping-up listener threw',
      )
    }
  }

  /** Every queued chunk is scored: an episode of falling behind, if one ran, is over. */
  caughtUp(): void {
    if (this.#droppedInEpisode === 0) return
    this.#o.logger.info(
      { event: 'wake_word_caught_up', dropped: this.#droppedInEpisode },
      'wake word scoring caught up',
    )
    this.#droppedInEpisode = 0
  }
}
