import type { Clock, TimerHandle } from '../ports/clock.js'

export type ExpiryReason = 'budget' | 'idle'

export interface SessionTimerOptions {
  readonly clock: Clock
  /** Wall-clock budget of the whole session. */
  readonly budgetMs: number
  /** The session ends after this long with nobody speaking and nothing playing. */
  readonly idleMs: number
  /** What the speaker still has to play; the room is not idle while it plays. */
  readonly playingMs: () => number
  /**
   * True while a human is being asked (an approval on a phone). That is waiting, not idleness:
   * a person finding their phone must not see the request withdrawn because the room was quiet.
   * The gate's approval timeout bounds the wait; the budget still ends everything.
   */
  readonly waitingForHuman?: () => boolean
  /**
   * False while no connection is open (the session still opening, a reconnect): nobody can be
   * heard then, so it is not quiet time either. The connection's own timeouts bound the wait.
   */
  readonly modelHears?: () => boolean
  readonly onExpire: (reason: ExpiryReason) => void
}

/**
 * The session's wall-clock budget and idle timeout (docs/voice-driver.md, rule 9), on the Clock
 * port. Activity only stamps a time — no timer is re-armed per audio frame — and the idle timer,
 * when it fires early, re-arms itself for what is left.
 */
export class SessionTimers {
  readonly #options: SessionTimerOptions
  #lastActivity: number
  #budget: TimerHandle | undefined
  #idle: TimerHandle | undefined
  #expired = false
  /** The idle time ran out at the last look; one more turn of the event loop before ending. */
  #lastLook = false

  constructor(options: SessionTimerOptions) {
    this.#options = options
    this.#lastActivity = options.clock.now()
  }

  start(): void {
    const { clock } = this.#options
    this.#lastActivity = clock.now()
    this.#budget = clock.setTimeout(() => this.#expire('budget'), this.#options.budgetMs)
    this.#armIdle(this.#options.idleMs)
  }

  /** Someone spoke, or the model said something. */
  activity(): void {
    this.#lastActivity = this.#options.clock.now()
  }

  stop(): void {
    const { clock } = this.#options
    if (this.#budget) clock.clearTimeout(this.#budget)
    if (this.#idle) clock.clearTimeout(this.#idle)
    this.#budget = undefined
    this.#idle = undefined
  }

  /** `lastLook`: this is the extra turn before ending (see `#checkIdle`); any other look resets it. */
  #armIdle(ms: number, lastLook = false): void {
    this.#lastLook = lastLook
    this.#idle = this.#options.clock.setTimeout(() => this.#checkIdle(), ms)
  }

  #checkIdle(): void {
    this.#idle = undefined
    if (this.#expired) return
    if (this.#options.waitingForHuman?.() || this.#options.modelHears?.() === false) {
      // Quiet time starts again once the answer is in and the model has said so, or once the
      // model can hear (the open stamps activity too).
      this.#lastActivity = this.#options.clock.now()
      this.#armIdle(this.#options.idleMs)
      return
    }
    const quietFor = this.#options.clock.now() - this.#lastActivity
    const left = Math.max(this.#options.idleMs - quietFor, this.#options.playingMs())
    if (left > 0) this.#armIdle(left)
    // After the event loop was held up (a slow disk, a long collection), due timers run before
    // the I/O that waited with them — the microphone's frames of someone speaking all along. A
    // timer of 0 runs after that I/O has been read, so the idle end is decided on what was heard.
    else if (!this.#lastLook) this.#armIdle(0, true)
    else this.#expire('idle')
  }

  #expire(reason: ExpiryReason): void {
    if (this.#expired) return
    this.#expired = true
    this.stop()
    this.#options.onExpire(reason)
  }
}
