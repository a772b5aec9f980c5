import { EMBEDDING_SIZE } from './features.js'

/**
 * A companion head (issue 46): a small model of ours beside a pretrained head, reading the same
 * window of embeddings, trained on our own TTS with speech straight after the phrase — where the
 * pretrained `hey_jarvis_v0.1` scores low ("hey jarvis what time is it" in one breath). Its score
 * and the head's are an OR: the chain takes the larger (heads.ts), so the head's threshold and run
 * of chunks judge either. Its own threshold is folded into its output bias when it is made, so
 * that it crosses the head's threshold where its probability crosses its own. It is asked only where
 * the head reaches a low gate of its own.
 *
 * A one-hidden-layer network: `hidden` ReLU units over the window (window × 96 values, oldest
 * embedding first), then a logistic output; the standardisation of its training is folded into the
 * first layer. bench/wake-companion.bench.ts makes it (docs/wake-word.md, "The companion head").
 */
export interface CompanionModel {
  /** Embeddings it reads: the head's window. */
  readonly window: number
  /**
   * It is asked only where the pretrained head scores at least this: on ordinary speech the head
   * stays below it nearly everywhere, on a phrase run into a command it does not (bench/RESULTS.md,
   * "the companion head"); and most chunks cost no companion run.
   */
  readonly gate: number
  readonly hidden: number
  /** Input-major: `w1[i * hidden + h]`. */
  readonly w1: Float32Array
  readonly b1: Float32Array
  readonly w2: Float32Array
  readonly b2: number
}

/** Its probability that `window` (the newest `window` embeddings, oldest first) ends the phrase. */
export function companionScore(m: CompanionModel, window: Float32Array): number {
  const h = new Float64Array(m.hidden)
  h.set(m.b1)
  const n = m.window * EMBEDDING_SIZE
  const from = window.length - n
  for (let i = 0; i < n; i++) {
    const x = window[from + i] ?? 0
    if (x === 0) continue
    const row = i * m.hidden
    for (let k = 0; k < m.hidden; k++) h[k] = (h[k] ?? 0) + x * (m.w1[row + k] ?? 0)
  }
  let z = m.b2
  for (let k = 0; k < m.hidden; k++) z += Math.max(0, h[k] ?? 0) * (m.w2[k] ?? 0)
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z))
}
