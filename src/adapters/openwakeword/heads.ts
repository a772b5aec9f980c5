import { type CompanionModel, companionScore } from './companion.js'
import { EMBEDDING_SIZE } from './features.js'
import type { ModelSession } from './model-session.js'
import type { VerifierStage } from './verifier.js'

/** The head's default window: 16 embeddings, 1.28 s. */
const DEFAULT_HEAD_WINDOW = 16

interface Head {
  readonly model: ModelSession
  readonly verifier?: VerifierStage | undefined
  /** Our companion head beside it (companion.ts): the larger of the two scores counts. */
  readonly companion?: CompanionModel | undefined
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
   * Every head on its part of `window` (the newest `longest` embeddings), or its companion where
   * that scores higher (an OR of the two): on an exact window only where the head reaches the
   * companion's gate, on a coarse one always — a coarse score only says whether to score exactly
   * (chain.ts), and the head's stand-in window can fall under the gate where the exact one does
   * not. An `exact` window gets the household's verifier where its score reaches the verifier's
   * gate, a coarse one never does.
   */
  run(window: Float32Array, exact: boolean): Promise<number[]> {
    return Promise.all(
      this.#heads.map(async (h, i) => {
        const n = this.#windows[i] ?? DEFAULT_HEAD_WINDOW
        const mine = window.slice((this.longest - n) * EMBEDDING_SIZE)
        const out = await h.model.run(mine, [1, n, EMBEDDING_SIZE])
        const head = out[0] ?? 0
        const c = h.companion
        const asked = c && (!exact || head >= c.gate)
        const score = asked ? Math.max(head, companionScore(c, mine)) : head
        return exact && h.verifier && score >= this.#gate(i, h.verifier)
          ? h.verifier.score(mine, score)
          : score
      }),
    )
  }
}
