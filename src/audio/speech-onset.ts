import type { Onset, OnsetSource } from '../ports/onset.js'
import type { SpeechDetector } from './speech-detector.js'

/**
 * `speech` mode: a session opens when the local speech detector hears someone start talking
 * (the behaviour before the wake word), with the detector's pre-roll. It hears the idle route
 * only, and is quiet from an onset until `rearm()`.
 */
export class SpeechOnset implements OnsetSource {
  readonly #detector: SpeechDetector
  #listener: ((onset: Onset) => void) | undefined

  constructor(detector: SpeechDetector) {
    this.#detector = detector
  }

  hear(frame: Uint8Array, capturedAtMs: number): void {
    const onset = this.#detector.push(frame, capturedAtMs)
    if (onset) {
      this.#listener?.({ cause: 'speech', preRoll: onset.preRoll, atMs: onset.triggeredAtMs })
    }
  }

  listen(listener: (onset: Onset) => void): void {
    this.#listener = listener
  }

  rearm(): void {
    this.#detector.rearm()
  }

  close(): void {
    this.#detector.close()
  }
}
