import type { Logger } from '../../core/logger.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'

/**
 * Counts rejected input and logs it without letting a flood write a line per message: the first
 * few of each reason in a window are logged in full (so a real fault is seen with its details),
 * the rest are counted and reported in one summary line per window. Each one is also told to
 * `counted` (the device's state keeps the totals the status shows).
 */
export class RejectionLog<R extends string> {
  readonly #log: Logger
  readonly #counted: ((reason: R) => void) | undefined
  readonly #msg: string
  readonly #perWindow: number
  readonly #windowMs: number
  readonly #inWindow = new Map<R, number>()
  readonly #suppressed = new Map<R, number>()
  readonly #clock: Clock
  #timer: TimerHandle | undefined

  constructor(
    log: Logger,
    msg: string,
    clock: Clock,
    options: { perWindow?: number; windowMs?: number; counted?: (reason: R) => void } = {},
  ) {
    this.#log = log
    this.#counted = options.counted
    this.#msg = msg
    this.#clock = clock
    this.#perWindow = options.perWindow ?? 5
    this.#windowMs = options.windowMs ?? 10_000
  }

  add(reason: R, fields: Record<string, unknown>): void {
    this.#counted?.(reason)
    const seen = (this.#inWindow.get(reason) ?? 0) + 1
    this.#inWindow.set(reason, seen)
    this.#arm()
    if (seen <= this.#perWindow) {
      this.#log.warn({ ...fields, reason }, this.#msg)
      return
    }
    this.#suppressed.set(reason, (this.#suppressed.get(reason) ?? 0) + 1)
  }

  /** Reports what was held back and starts a new window. */
  flush(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#suppressed.size > 0) {
      this.#log.warn(
        {
          event: 'rejections_summary',
          suppressed: Object.fromEntries(this.#suppressed),
          windowMs: this.#windowMs,
        },
        `${this.#msg} (summary: more of the same, not logged one by one)`,
      )
    }
    this.#suppressed.clear()
    this.#inWindow.clear()
  }

  #arm(): void {
    if (this.#timer) return
    this.#timer = this.#clock.setTimeout(() => this.flush(), this.#windowMs)
  }
}
