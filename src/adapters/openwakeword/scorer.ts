import { EMBEDDING_SIZE, type FeaturePipeline } from './features.js'
import type { ChunkScorer, ExactScores, ModelSession } from './model-session.js'

/** The head's default window: 16 embeddings, 1.28 s. */
const DEFAULT_HEAD_WINDOW = 16

/** How many embeddings a head reads: its declared input's second dimension, else 16. */
function headWindow(model: ModelSession): number {
  const n = model.inputShape[1]
  return typeof n === 'number' && n > 0 ? n : DEFAULT_HEAD_WINDOW
}

/** The chain itself, run wherever it is made: in process, or on the runtime's thread. */
export class LocalScorer implements ChunkScorer {
  readonly #features: FeaturePipeline
  readonly #heads: readonly ModelSession[]
  readonly #windows: number[]
  readonly #longest: number

  constructor(features: FeaturePipeline, heads: readonly ModelSession[]) {
    this.#features = features
    this.#heads = heads
    this.#windows = heads.map(headWindow)
    this.#longest = Math.max(...this.#windows)
  }

  step(chunk: Int16Array): Promise<void> {
    return this.#features.step(chunk)
  }

  reset(): void {
    this.#features.reset()
  }

  async coarse(): Promise<number[]> {
    await this.#features.embed(1)
    const all = this.#features.approximate(this.#longest)
    return (await this.#runHeads(all)).map((o) => o.score)
  }

  async exact(behind: number, gates: readonly number[]): Promise<ExactScores[]> {
    await this.#features.embed(this.#longest + behind - 1)
    const out: ExactScores[] = []
    for (let b = behind - 1; b >= 0; b--) {
      const heads = await this.#runHeads(this.#features.latest(this.#longest, b))
      out.push({
        scores: heads.map((h) => h.score),
        windows: heads.map((h, i) => (h.score >= (gates[i] ?? Infinity) ? h.window : undefined)),
      })
    }
    return out
  }

  async close(): Promise<void> {}

  #runHeads(all: Float32Array): Promise<{ score: number; window: Float32Array }[]> {
    return Promise.all(
      this.#heads.map(async (h, i) => {
        const n = this.#windows[i] ?? DEFAULT_HEAD_WINDOW
        const window = all.slice((this.#longest - n) * EMBEDDING_SIZE)
        const out = await h.run(window, [1, n, EMBEDDING_SIZE])
        return { score: out[0] ?? 0, window }
      }),
    )
  }
}
