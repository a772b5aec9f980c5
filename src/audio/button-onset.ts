import { LIVE_INPUT_RATE_HZ } from '../ports/live-llm.js'
import type { Onset, OnsetSource } from '../ports/onset.js'
import { bytesForMs } from './pcm.js'
import { PreRollRing } from './pre-roll.js'

/** People start talking as they press: half a second before the press goes first. */
const BUTTON_PRE_ROLL_MS = 500

/**
 * Talking by the button: the panel's `talk` event (a short press in `button` mode, a hold let go
 * in `wake` mode) opens a session with the half second of the idle route before it; during a
 * session it talks over the reply (the session loop's barge-in). In `button` mode nothing else
 * opens one; in `wake` mode it sits beside the wake stage (AnyOnset).
 */
export class ButtonOnset implements OnsetSource {
  readonly #ring = new PreRollRing(bytesForMs(LIVE_INPUT_RATE_HZ, BUTTON_PRE_ROLL_MS))
  #listener: ((onset: Onset) => void) | undefined

  hear(frame: Uint8Array): void {
    this.#ring.push(frame)
  }

  /** The panel's press to talk. */
  pressed(atMs: number): void {
    this.#listener?.({ cause: 'button', preRoll: this.#ring.snapshot(), atMs })
  }

  listen(listener: (onset: Onset) => void): void {
    this.#listener = listener
  }

  rearm(): void {
    this.#ring.clear()
  }

  close(): void {}
}
