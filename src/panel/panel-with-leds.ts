import type { ButtonEvent, LedState, Panel } from '../ports/panel.js'

/** What a colour-LED driver offers the panel: states in, dark on close. */
export interface StateLeds {
  show(state: LedState): void
  /** A level (the volume) for a moment, where the lights can show one. */
  showLevel?(percent: number): void
  close(): Promise<void>
}

/**
 * A board whose button is one thing and whose lights are another (the ReSpeaker 2-Mic HAT: a GPIO
 * button, APA102 LEDs on SPI): one Panel to the rest of Nocturn. Closing turns the lights off.
 */
export class PanelWithLeds implements Panel {
  readonly #button: Panel
  readonly #leds: StateLeds

  constructor(button: Panel, leds: StateLeds) {
    this.#button = button
    this.#leds = leds
  }

  start(onButton: (event: ButtonEvent) => void): Promise<void> {
    return this.#button.start(onButton)
  }

  setLed(state: LedState): void {
    this.#button.setLed(state)
    this.#leds.show(state)
  }

  showLevel(percent: number): void {
    this.#leds.showLevel?.(percent)
  }

  async close(): Promise<void> {
    try {
      await this.#button.close()
    } finally {
      await this.#leds.close()
    }
  }
}
