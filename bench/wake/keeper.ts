import type { VerifierStage } from '../../src/adapters/openwakeword/verifier.js'

/** Chunks as the detector scored them: the head's score, and its window where it passed the gate. */
export interface Scored {
  readonly head: Float32Array
  readonly windows: Map<number, Float32Array>
}

/**
 * A verifier stage that decides nothing: it keeps the window the head scored last, so a bench can
 * keep the windows of the chunks scored at or above `gate` and fit verifiers on them offline.
 */
export class Keeper implements VerifierStage {
  readonly gate: number
  pending: Float32Array | undefined
  constructor(gate: number) {
    this.gate = gate
  }
  score(window: Float32Array, headScore: number): number {
    this.pending = window
    return headScore
  }
}
