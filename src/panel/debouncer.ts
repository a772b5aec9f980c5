import type { Clock, TimerHandle } from '../ports/clock.js'

/**
 * Software debounce for a button line whose backend has none (libgpiod 1.x, sysfs polling): a
 * level counts only once it has held for `ms`; contact bounce in between is forgotten, so a bouncy
 * press is one press. Repeated reports of the level already reported are ignored.
 */
export class Debouncer {
  readonly #clock: Clock
  readonly #ms: number
  readonly #onStable: (pressed: boolean, atMs: number) => void
  #stable: boolean
  #pending: boolean | undefined
  #pendingSince = 0
  #timer: TimerHandle | undefined

  constructor(
    clock: Clock,
    ms: number,
    onStable: (pressed: boolean, atMs: number) => void,
    initial = false,
  ) {
    this.#clock = clock
    this.#ms = ms
    this.#onStable = onStable
    this.#stable = initial
  }

  /**
   * A raw edge: the line reads `pressed` since `atMs` (when it happened, if the source knows; else
   * now). An edge that happened a debounce time or more after the pending one means that one had
   * settled — news read late by a busy process, not a bounce — so it is reported first.
   */
  input(pressed: boolean, atMs = this.#clock.now()): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#pending !== undefined && atMs - this.#pendingSince >= this.#ms) {
      const settled = this.#pending
      this.#pending = undefined
      this.#stable = settled
      this.#onStable(settled, this.#pendingSince)
    }
    if (pressed === this.#stable) {
      // Bounced back before it settled: nothing happened.
      this.#pending = undefined
      return
    }
    if (pressed !== this.#pending) this.#pendingSince = atMs
    this.#pending = pressed
    const fire = () => {
      this.#timer = undefined
      this.#pending = undefined
      this.#stable = pressed
      // The event is dated when the contact first moved, not when it settled.
      this.#onStable(pressed, this.#pendingSince)
    }
    if (this.#ms <= 0) fire()
    else this.#timer = this.#clock.setTimeout(fire, this.#ms)
  }

  dispose(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
