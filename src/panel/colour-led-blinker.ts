import type { Clock, TimerHandle } from '../ports/clock.js'
import type { LedState } from '../ports/panel.js'
import type { Rgb } from '../ports/rgb-leds.js'
import { LedBlinker } from './led-blinker.js'
import { LED_COLOURS } from './led-colours.js'

/** How long a level (the volume) stays on the LEDs after its last change. */
export const LEVEL_SHOWN_MS = 2000
/** The level's colour: white, so it reads as a quantity rather than a state. */
const LEVEL_COLOUR: Rgb = { r: 255, g: 255, b: 255 }

/**
 * A level 0–100 on `count` LEDs, filled from the first: each LED is a 1/count share, the last
 * one partly lit for what is left over, so 50 % on three LEDs is one full and one half.
 */
export function levelColours(percent: number, count: number): (Rgb | undefined)[] {
  const filled = (Math.max(0, Math.min(100, percent)) / 100) * count
  return Array.from({ length: count }, (_, i) => {
    const share = Math.max(0, Math.min(1, filled - i))
    if (share === 0) return undefined
    return { r: LEVEL_COLOUR.r * share, g: LEVEL_COLOUR.g * share, b: LEVEL_COLOUR.b * share }
  })
}

/**
 * The one-colour LED's rhythm in each state's colour: the LedBlinker says when the light is on, this
 * says in which colour. A new state whose first step is also lit repaints at once (the blinker
 * reports level changes only). No I/O: `paint` is the adapter's.
 */
export class ColourLedBlinker {
  readonly #blinker: LedBlinker
  readonly #paint: (colour: Rgb | undefined) => void
  readonly #clock: Clock
  readonly #level:
    | { count: number; paint: (colours: readonly (Rgb | undefined)[]) => void }
    | undefined
  #colour: Rgb = LED_COLOURS.idle
  #on = false
  #levelUntil: TimerHandle | undefined

  constructor(
    clock: Clock,
    paint: (colour: Rgb | undefined) => void,
    level?: { count: number; paint: (colours: readonly (Rgb | undefined)[]) => void },
  ) {
    this.#clock = clock
    this.#paint = paint
    this.#level = level
    this.#blinker = new LedBlinker(clock, (on) => {
      this.#on = on
      if (!this.#levelUntil) this.#paint(on ? this.#colour : undefined)
    })
  }

  /** Shows a level (0–100) across the LEDs for LEVEL_SHOWN_MS, then the state's rhythm again. */
  showLevel(percent: number): void {
    if (!this.#level) return
    if (this.#levelUntil) this.#clock.clearTimeout(this.#levelUntil)
    this.#level.paint(levelColours(percent, this.#level.count))
    this.#levelUntil = this.#clock.setTimeout(() => {
      this.#levelUntil = undefined
      this.#paint(this.#on ? this.#colour : undefined)
    }, LEVEL_SHOWN_MS)
  }

  show(state: LedState): void {
    if (state === this.#blinker.state) return
    this.#colour = LED_COLOURS[state]
    const wasOn = this.#on
    this.#blinker.show(state)
    if (wasOn && this.#on && !this.#levelUntil) this.#paint(this.#colour)
  }

  /** Stops blinking and leaves the LEDs dark. */
  stop(): void {
    if (this.#levelUntil) this.#clock.clearTimeout(this.#levelUntil)
    this.#levelUntil = undefined
    this.#blinker.stop()
  }
}
