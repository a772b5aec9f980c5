import type { LedState } from '../ports/panel.js'

/**
 * What the LED and the status topic show: the voice driver's state, unless something the
 * household should know about is wrong — the microphone hears nothing, the store cannot be
 * written — in which case `error`, with the reason, until that fault clears. Several faults may
 * hold at once; the oldest is shown.
 */
export class ShownState {
  readonly #apply: (state: LedState, reason: string | undefined) => void
  readonly #faults = new Map<string, string>()
  #driver: LedState = 'idle'
  #last: string | undefined

  constructor(apply: (state: LedState, reason: string | undefined) => void) {
    this.#apply = apply
  }

  /** The driver's state changed. */
  driver(state: LedState): void {
    this.#driver = state
    this.#emit()
  }

  /** `source` (e.g. "microphone") is failing, for `reason`; `undefined` clears it. */
  fault(source: string, reason: string | undefined): void {
    if (reason === undefined) this.#faults.delete(source)
    else this.#faults.set(source, reason)
    this.#emit()
  }

  get reason(): string | undefined {
    return this.#faults.values().next().value
  }

  #emit(): void {
    const reason = this.reason
    const state = reason !== undefined ? 'error' : this.#driver
    const key = `${state}\n${reason ?? ''}`
    if (key === this.#last) return
    this.#last = key
    this.#apply(state, reason)
  }
}
