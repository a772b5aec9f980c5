import { NocturnError } from '../../core/errors.js'
import { EMBEDDING_SIZE } from './features.js'
import heyJarvis from './hey-jarvis-companion.json' with { type: 'json' }

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

/** The file as the bench writes it: float32 arrays little-endian in base64. */
export interface CompanionRecord {
  readonly kind: 'nocturn-wake-companion'
  readonly version: 1
  /** The pretrained head it stands beside (its file name). */
  readonly head: string
  readonly window: number
  readonly gate: number
  readonly hidden: number
  readonly w1: string
  readonly b1: string
  readonly w2: string
  readonly b2: number
  /** What it was trained on and how it was chosen, for doctor and the docs. */
  readonly trained: Record<string, unknown>
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

function floats(b64: string): Float32Array {
  const b = Buffer.from(b64, 'base64')
  const out = new Float32Array(b.byteLength >> 2)
  for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4)
  return out
}

/** A record as a model; a record of another shape is refused, naming what is wrong. */
export function companionOf(r: CompanionRecord): CompanionModel {
  const m = {
    window: r.window,
    gate: r.gate,
    hidden: r.hidden,
    w1: floats(r.w1),
    b1: floats(r.b1),
    w2: floats(r.w2),
    b2: r.b2,
  }
  const size = m.window * EMBEDDING_SIZE * m.hidden
  if (
    r.kind !== 'nocturn-wake-companion' ||
    m.w1.length !== size ||
    m.b1.length !== m.hidden ||
    m.w2.length !== m.hidden
  ) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `the ${r.head} companion head is not a ${m.window} × ${EMBEDDING_SIZE} → ${m.hidden} → 1 network: re-make it with bench/wake-companion.bench.ts`,
    )
  }
  return m
}

/** Pretrained heads that have a companion of ours, by their `nocturn wake list` name. */
const COMPANIONS: Record<string, CompanionRecord> = {
  hey_jarvis: heyJarvis as CompanionRecord,
}

/** The companion of pretrained head `name`, if it has one. */
export function companionFor(name: string): CompanionModel | undefined {
  const r = COMPANIONS[name]
  return r ? companionOf(r) : undefined
}
