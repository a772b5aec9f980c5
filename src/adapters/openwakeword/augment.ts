import { SAMPLE_RATE_HZ } from './features.js'

/**
 * What enrolment makes from a household's few recordings so that its verifier has been shown more
 * than it was given: the phrase cut short ("hey jar…"), and the near-misses at other speeds, as
 * other voices would say them.
 */

const HOP = SAMPLE_RATE_HZ / 100

/** The clip's 10 ms frames from the first to the last within 30 dB of its loudest. */
function voicedSpan(pcm: Uint8Array): { first: number; last: number } | undefined {
  const v = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength)
  const frames = Math.floor(pcm.length / 2 / HOP)
  const energy: number[] = []
  for (let f = 0; f < frames; f++) {
    let e = 0
    for (let i = 0; i < HOP; i++) {
      const x = v.getInt16((f * HOP + i) * 2, true)
      e += x * x
    }
    energy.push(e / HOP)
  }
  const loudest = Math.max(0, ...energy)
  if (loudest === 0) return undefined
  const first = energy.findIndex((e) => e >= loudest / 1000)
  let last = first
  for (let f = first; f < frames; f++) if ((energy[f] ?? 0) >= loudest / 1000) last = f
  return { first, last }
}

/**
 * The clip up to `keep` of its voiced span, or nothing when it has none worth cutting (under
 * 100 ms): "hey jar…" in the household's own voice, the nearest miss there is.
 */
export function cutShort(pcm: Uint8Array, keep: number): Uint8Array | undefined {
  const span = voicedSpan(pcm)
  if (!span || span.last - span.first < 10) return undefined
  const end = span.first + Math.round((span.last - span.first + 1) * keep)
  return pcm.subarray(0, end * HOP * 2)
}

/**
 * The clip played `factor` times as fast, pitch and tempo together (a tape run faster or
 * slower), by linear interpolation: speech recognisers train on 0.9 and 1.1 of every clip so
 * that one voice stands for its neighbours, and a household's one "hey jars" for its guests'.
 */
export function atSpeed(pcm: Uint8Array, factor: number): Uint8Array {
  const v = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength)
  const n = pcm.length >> 1
  const outN = Math.max(0, Math.floor((n - 1) / factor) + 1)
  const out = new Uint8Array(outN * 2)
  const o = new DataView(out.buffer)
  for (let i = 0; i < outN; i++) {
    const at = i * factor
    const j = Math.floor(at)
    const a = v.getInt16(j * 2, true)
    const b = j + 1 < n ? v.getInt16((j + 1) * 2, true) : a
    o.setInt16(i * 2, Math.round(a + (b - a) * (at - j)), true)
  }
  return out
}

/**
 * `copies` noisy copies of each feature window (the head's input, never audio): seeded Gaussian
 * noise of `share` times each feature's spread over `windows` (at least the mean spread, so a
 * feature the few windows barely vary on still moves). What a lesson holds for the household's
 * phrase in a noisy room when it has only clean wakes of it.
 */
export function jittered(
  windows: readonly Float32Array[],
  share: number,
  copies: number,
  seed: number,
): Float32Array[] {
  const d = windows[0]?.length ?? 0
  const n = windows.length
  if (n === 0 || copies <= 0) return []
  const mean = new Float64Array(d)
  const spread = new Float64Array(d)
  for (const w of windows) for (let j = 0; j < d; j++) mean[j] = (mean[j] ?? 0) + (w[j] ?? 0) / n
  for (const w of windows) {
    for (let j = 0; j < d; j++)
      spread[j] = (spread[j] ?? 0) + ((w[j] ?? 0) - (mean[j] ?? 0)) ** 2 / n
  }
  let average = 0
  for (let j = 0; j < d; j++) {
    spread[j] = Math.sqrt(spread[j] ?? 0)
    average += (spread[j] ?? 0) / d
  }
  let s = seed >>> 0 || 1
  const uniform = () => {
    // xorshift32: the same copies for the same lesson, on every run.
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return (s + 0.5) / 2 ** 32
  }
  const gaussian = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())
  const out: Float32Array[] = []
  for (const w of windows) {
    for (let c = 0; c < copies; c++) {
      out.push(
        Float32Array.from(w, (v, j) => v + share * Math.max(spread[j] ?? 0, average) * gaussian()),
      )
    }
  }
  return out
}
