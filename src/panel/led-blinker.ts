import type { Clock, TimerHandle } from '../ports/clock.js'
import type { LedState } from '../ports/panel.js'
import { LED_PATTERNS, type LedStep } from './led-patterns.js'

/**
 * Turns an LED state into on/off levels over time on the Clock port, for panels with one plain LED.
 * No I/O: `setLevel` is the adapter's. Showing the state already shown changes nothing, so a
 * driver that repeats itself never restarts a blink mid-way. `setLevel` is called only on changes.
 */
export class LedBlinker {
  readonly #clock: Clock
  readonly #setLevel: (on: boolean) => void
  #state: LedState | undefined
  #level: boolean | undefined
  #timer: TimerHandle | undefined

  constructor(clock: Clock, setLevel: (on: boolean) => void) {
    this.#clock = clock
    this.#setLevel = setLevel
  }

  get state(): LedState | undefined {
    return this.#state
  }

  show(state: LedState): void {
    if (state === this.#state) return
    this.#state = state
    this.#cancel()
    this.#step(LED_PATTERNS[state], 0)
  }

  /** Stops blinking and leaves the LED dark. */
  stop(): void {
    this.#cancel()
    this.#state = undefined
    this.#apply(false)
  }

  #step(pattern: readonly LedStep[], index: number): void {
    const step = pattern[index] as LedStep
    this.#apply(step.on)
    if (pattern.length === 1) return
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined
      this.#step(pattern, (index + 1) % pattern.length)
    }, step.ms)
  }

  #apply(on: boolean): void {
    if (on === this.#level) return
    this.#level = on
    this.#setLevel(on)
  }

  #cancel(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
