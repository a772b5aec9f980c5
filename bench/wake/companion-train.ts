// Trains the companion head (src/adapters/openwakeword/companion.ts) on companion-data.ts's cached
// embeddings: a one-hidden-layer network over the head's 16 × 96 window, class-balanced logistic
// loss, Adam, seeded — the same data give the same weights. Which windows are positives:
// those ending from POS_FROM to POS_TO chunks after the phrase's end (the phrase and the first
// few hundred ms of what follows); negatives: every window of the near-misses, the prose and the
// noise, and the windows of a wake clip that end before the phrase began or well after it ended
// (the command alone). The windows in between are neither.

import type { CompanionModel } from '../../src/adapters/openwakeword/companion.js'
import { EMBEDDING_SIZE } from '../../src/adapters/openwakeword/features.js'
import { type Kept, seeded } from './companion-data.js'

const WINDOW = 16
const D = WINDOW * EMBEDDING_SIZE
/** Upstream forces the first 5 scores to 0: those windows are the noise prefill's. */
const WARMUP = 5

export interface TrainOptions {
  readonly hidden: number
  readonly epochs: number
  readonly posFrom: number
  readonly posTo: number
  readonly seed: number
  readonly l2?: number
  readonly lr?: number
  /** Each near-miss window's weight against the other negatives' (1: as any negative). */
  readonly nearWeight?: number
}

/** Each labelled window: its clip, its chunk, 1 or 0. */
export interface Labelled {
  readonly clip: number
  readonly chunk: number
  readonly label: 0 | 1
  /** Its weight against an ordinary window's (companion-prose.ts's hard negatives): 1 unless set. */
  readonly weight?: number
}

/** Chunks before the positives where a window holds little of the phrase (0.64 s: "hey jarvis" is ~0.6–0.9 s). */
const BEFORE = 8
/** Chunks after the phrase's end from which a window holds none of it (1.28 s + a margin). */
const AFTER = 20

export function labelled(kept: readonly Kept[], o: Pick<TrainOptions, 'posFrom' | 'posTo'>) {
  const out: Labelled[] = []
  kept.forEach((k, clip) => {
    const n = k.embeddings.length / EMBEDDING_SIZE - (WINDOW - 1)
    for (let c = WARMUP; c < n; c++) {
      const end = c + 1
      if (k.phraseEnd === undefined) {
        out.push({ clip, chunk: c, label: 0 })
        continue
      }
      if (end >= k.phraseEnd + o.posFrom && end <= k.phraseEnd + o.posTo)
        out.push({ clip, chunk: c, label: 1 })
      else if (end < k.phraseEnd + o.posFrom - BEFORE || end > k.phraseEnd + AFTER)
        out.push({ clip, chunk: c, label: 0 })
    }
  })
  return out
}

/** Chunk `c`'s window of clip `k`: rows c … c + 15 of its embeddings (no copy). */
function windowOf(k: Kept, c: number): Float32Array {
  return k.embeddings.subarray(c * EMBEDDING_SIZE, (c + WINDOW) * EMBEDDING_SIZE)
}

function gaussian(rnd: () => number): number {
  const u = Math.max(1e-12, rnd())
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd())
}

/** Fits the network; `log` hears each epoch's mean loss. */
export function trainCompanion(
  kept: readonly Kept[],
  samples: readonly Labelled[],
  o: TrainOptions,
  log: (s: string) => void = () => {},
): CompanionModel {
  const H = o.hidden
  const rnd = seeded(o.seed)
  const lr = o.lr ?? 1e-3
  const l2 = o.l2 ?? 1e-4
  const near = o.nearWeight ?? 1
  // Standardisation over the samples, folded back into the first layer at the end.
  const mean = new Float64Array(D)
  const sd = new Float64Array(D)
  for (const s of samples) {
    const w = windowOf(kept[s.clip] as Kept, s.chunk)
    for (let i = 0; i < D; i++) mean[i] = (mean[i] ?? 0) + (w[i] ?? 0)
  }
  for (let i = 0; i < D; i++) mean[i] = (mean[i] ?? 0) / samples.length
  for (const s of samples) {
    const w = windowOf(kept[s.clip] as Kept, s.chunk)
    for (let i = 0; i < D; i++) sd[i] = (sd[i] ?? 0) + ((w[i] ?? 0) - (mean[i] ?? 0)) ** 2
  }
  for (let i = 0; i < D; i++) sd[i] = Math.sqrt((sd[i] ?? 0) / samples.length) + 1e-3

  const w1 = Float64Array.from({ length: D * H }, () => gaussian(rnd) / Math.sqrt(D))
  const b1 = new Float64Array(H)
  const w2 = Float64Array.from({ length: H }, () => gaussian(rnd) / Math.sqrt(H))
  let b2 = 0
  const params = [w1, b1, w2]
  const m = params.map((p) => new Float64Array(p.length))
  const v = params.map((p) => new Float64Array(p.length))
  let mb2 = 0
  let vb2 = 0
  const positives = samples.filter((s) => s.label === 1).length
  const weightOf = (y: number) =>
    y === 1 ? 0.5 / positives : 0.5 / Math.max(1, samples.length - positives)
  const order = samples.map((_, i) => i)
  const BATCH = 128
  const x = new Float64Array(D)
  const h = new Float64Array(H)
  const dh = new Float64Array(H)
  const g = params.map((p) => new Float64Array(p.length))
  let t = 0
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    // Fisher–Yates with the seeded generator.
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1))
      ;[order[i], order[j]] = [order[j] as number, order[i] as number]
    }
    let loss = 0
    for (let from = 0; from < order.length; from += BATCH) {
      for (const a of g) a.fill(0)
      let gb2 = 0
      const batch = order.slice(from, from + BATCH)
      for (const idx of batch) {
        const s = samples[idx] as Labelled
        const clip = kept[s.clip] as Kept
        const w = windowOf(clip, s.chunk)
        for (let i = 0; i < D; i++) x[i] = ((w[i] ?? 0) - (mean[i] ?? 0)) / (sd[i] ?? 1)
        h.set(b1)
        for (let i = 0; i < D; i++) {
          const xi = x[i] ?? 0
          const row = i * H
          for (let k = 0; k < H; k++) h[k] = (h[k] ?? 0) + xi * (w1[row + k] ?? 0)
        }
        let z = b2
        for (let k = 0; k < H; k++) z += Math.max(0, h[k] ?? 0) * (w2[k] ?? 0)
        const p = 1 / (1 + Math.exp(-z))
        const a =
          weightOf(s.label) * samples.length * (clip.group === 'near' ? near : 1) * (s.weight ?? 1)
        loss -= a * Math.log(s.label === 1 ? Math.max(1e-12, p) : Math.max(1e-12, 1 - p))
        const dz = (a * (p - s.label)) / batch.length
        gb2 += dz
        const [g1, gb1, g2] = g as [Float64Array, Float64Array, Float64Array]
        let active = false
        for (let k = 0; k < H; k++) {
          const hk = h[k] ?? 0
          dh[k] = hk > 0 ? dz * (w2[k] ?? 0) : 0
          if (hk <= 0) continue
          active = true
          g2[k] = (g2[k] ?? 0) + dz * hk
          gb1[k] = (gb1[k] ?? 0) + (dh[k] ?? 0)
        }
        if (!active) continue
        for (let i = 0; i < D; i++) {
          const xi = x[i] ?? 0
          const row = i * H
          for (let k = 0; k < H; k++) g1[row + k] = (g1[row + k] ?? 0) + (dh[k] ?? 0) * xi
        }
      }
      t++
      const c1 = 1 - 0.9 ** t
      const c2 = 1 - 0.999 ** t
      params.forEach((p, j) => {
        const gj = g[j] as Float64Array
        const mj = m[j] as Float64Array
        const vj = v[j] as Float64Array
        const decay = j === 1 ? 0 : l2
        for (let i = 0; i < p.length; i++) {
          const gi = (gj[i] ?? 0) + decay * (p[i] ?? 0)
          mj[i] = 0.9 * (mj[i] ?? 0) + 0.1 * gi
          vj[i] = 0.999 * (vj[i] ?? 0) + 0.001 * gi * gi
          p[i] = (p[i] ?? 0) - (lr * ((mj[i] ?? 0) / c1)) / (Math.sqrt((vj[i] ?? 0) / c2) + 1e-8)
        }
      })
      mb2 = 0.9 * mb2 + 0.1 * gb2
      vb2 = 0.999 * vb2 + 0.001 * gb2 * gb2
      b2 -= (lr * (mb2 / c1)) / (Math.sqrt(vb2 / c2) + 1e-8)
    }
    log(`  epoch ${epoch + 1}: loss ${(loss / samples.length).toFixed(4)}`)
  }
  // Fold the standardisation in: w1' = w1 / sd, b1' = b1 − Σ mean · w1 / sd.
  const fw1 = new Float32Array(D * H)
  const fb1 = new Float32Array(H)
  for (let k = 0; k < H; k++) {
    let b = b1[k] ?? 0
    for (let i = 0; i < D; i++) {
      const wi = (w1[i * H + k] ?? 0) / (sd[i] ?? 1)
      fw1[i * H + k] = wi
      b -= wi * (mean[i] ?? 0)
    }
    fb1[k] = b
  }
  return { window: WINDOW, gate: 0, hidden: H, w1: fw1, b1: fb1, w2: Float32Array.from(w2), b2 }
}
