import type { ButtonEvent, LedState, Panel } from '../ports/panel.js'

/** The `none` panel: no button, no LED — for a board without either, or a headless test. */
export class NullPanel implements Panel {
  #led: LedState | undefined

  get led(): LedState | undefined {
    return this.#led
  }

  async start(_onButton: (event: ButtonEvent) => void): Promise<void> {}

  setLed(state: LedState): void {
    this.#led = state
  }

  async close(): Promise<void> {}
}
