import type { Onset, OnsetSource } from '../ports/onset.js'

/**
 * Several onset sources as one, whichever tells first: in `wake` mode the wake stage and the
 * button's hold to talk, so a phrase lost in a loud room can still be said after a press.
 */
export class AnyOnset implements OnsetSource {
  readonly #sources: readonly OnsetSource[]

  constructor(sources: readonly OnsetSource[]) {
    this.#sources = sources
  }

  hear(frame: Uint8Array, capturedAtMs: number): void {
    for (const s of this.#sources) s.hear?.(frame, capturedAtMs)
  }

  listen(listener: (onset: Onset) => void): void {
    for (const s of this.#sources) s.listen(listener)
  }

  rearm(): void {
    for (const s of this.#sources) s.rearm()
  }

  async close(): Promise<void> {
    await Promise.all(this.#sources.map((s) => s.close()))
  }
}
