import { LIVE_INPUT_RATE_HZ } from '../ports/live-llm.js'
import type { Onset, OnsetSource } from '../ports/onset.js'
import { bytesForMs } from './pcm.js'
import { PreRollRing } from './pre-roll.js'

/** People start talking as they press: half a second before the press goes first. */
const BUTTON_PRE_ROLL_MS = 500
/**
 * The longest hold whose audio is kept: wake mode's hold talks when let go within a second of the
 * long press (1.8 s by default), and a person may speak from the moment they press.
 */
const HELD_KEPT_MS = 2500

/**
 * Talking by the button: the panel's `talk` event (a short press in `button` mode, a hold let go
 * in `wake` mode) opens a session with the idle route from half a second before the press —
 * what was said while the button was held included (up to HELD_KEPT_MS); during a
 * session it talks over the reply (the session loop's barge-in). In `button` mode nothing else
 * opens one; in `wake` mode it sits beside the wake stage (AnyOnset).
 */
export class ButtonOnset implements OnsetSource {
  readonly #ring = new PreRollRing(
    bytesForMs(LIVE_INPUT_RATE_HZ, BUTTON_PRE_ROLL_MS + HELD_KEPT_MS),
  )
  #listener: ((onset: Onset) => void) | undefined

  hear(frame: Uint8Array, capturedAtMs: number): void {
    this.#ring.push(frame, capturedAtMs)
  }

  /** The panel's press to talk, let go `heldMs` after it was pressed. */
  pressed(atMs: number, heldMs = 0): void {
    const wanted = bytesForMs(LIVE_INPUT_RATE_HZ, BUTTON_PRE_ROLL_MS + Math.max(0, heldMs))
    this.#listener?.({ cause: 'button', preRoll: this.#ring.snapshot(wanted), atMs })
  }

  listen(listener: (onset: Onset) => void): void {
    this.#listener = listener
  }

  rearm(): void {
    this.#ring.clear()
  }

  close(): void {}
}
