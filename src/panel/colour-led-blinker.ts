import type { Clock } from '../ports/clock.js'
import type { LedState } from '../ports/panel.js'
import type { Rgb } from '../ports/rgb-leds.js'
import { LedBlinker } from './led-blinker.js'
import { LED_COLOURS } from './led-colours.js'

/**
 * The one-colour LED's rhythm in each state's colour: the LedBlinker says when the light is on, this
 * says in which colour. A new state whose first step is also lit repaints at once (the blinker
 * reports level changes only). No I/O: `paint` is the adapter's.
 */
export class ColourLedBlinker {
  readonly #blinker: LedBlinker
  readonly #paint: (colour: Rgb | undefined) => void
  #colour: Rgb = LED_COLOURS.idle
  #on = false

  constructor(clock: Clock, paint: (colour: Rgb | undefined) => void) {
    this.#paint = paint
    this.#blinker = new LedBlinker(clock, (on) => {
      this.#on = on
      this.#paint(on ? this.#colour : undefined)
    })
  }

  show(state: LedState): void {
    if (state === this.#blinker.state) return
    this.#colour = LED_COLOURS[state]
    const wasOn = this.#on
    this.#blinker.show(state)
    if (wasOn && this.#on) this.#paint(this.#colour)
  }

  /** Stops blinking and leaves the LEDs dark. */
  stop(): void {
    this.#blinker.stop()
  }
}
