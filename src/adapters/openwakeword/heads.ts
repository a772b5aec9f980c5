import { EMBEDDING_SIZE } from './features.js'
import type { ModelSession } from './model-session.js'
import type { VerifierStage } from './verifier.js'

/** The head's default window: 16 embeddings, 1.28 s. */
const DEFAULT_HEAD_WINDOW = 16

interface Head {
  readonly model: ModelSession
  readonly verifier?: VerifierStage | undefined
}

/**
 * Every phrase's head on one window of embeddings: each reads its own newest part of it (most
 * take 16, `weather` 22), and on an exact window the household's verifier rescores where the
 * head reaches its gate.
 */
export class Heads {
  readonly #heads: readonly Head[]
  readonly #windows: number[]
  /** The verifier's gate of head `i` now (it follows the sensitivity: `WakeTrigger.gate`). */
  readonly #gate: (i: number, verifier: VerifierStage) => number
  /** The longest head's window: how many embeddings a window holds. */
  readonly longest: number

  constructor(heads: readonly Head[], gate: (i: number, verifier: VerifierStage) => number) {
    this.#heads = heads
    this.#gate = gate
    this.#windows = heads.map((h) => {
      const n = h.model.inputShape[1]
      return typeof n === 'number' && n > 0 ? n : DEFAULT_HEAD_WINDOW
    })
    this.longest = Math.max(...this.#windows)
  }

  /**
   * Every head on its part of `window` (the newest `longest` embeddings); an `exact` window gets
   * the household's verifier where the head reaches its gate, a coarse one never does.
   */
  run(window: Float32Array, exact: boolean): Promise<number[]> {
    return Promise.all(
      this.#heads.map(async (h, i) => {
        const n = this.#windows[i] ?? DEFAULT_HEAD_WINDOW
        const mine = window.slice((this.longest - n) * EMBEDDING_SIZE)
        const out = await h.model.run(mine, [1, n, EMBEDDING_SIZE])
        const score = out[0] ?? 0
        return exact && h.verifier && score >= this.#gate(i, h.verifier)
          ? h.verifier.score(mine, score)
          : score
      }),
    )
  }
}
