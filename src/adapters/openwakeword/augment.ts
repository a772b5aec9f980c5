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

/** `seconds` of seeded pink noise (Paul Kellet's filter), S16LE at 16 kHz, peak at -12 dBFS. */
export function pinkNoise(seconds: number, seed: number): Uint8Array {
  const n = Math.round(seconds * SAMPLE_RATE_HZ)
  const x = new Float64Array(n)
  let s = seed >>> 0 || 1
  let [b0, b1, b2, b3, b4, b5, b6] = [0, 0, 0, 0, 0, 0, 0]
  for (let i = 0; i < n; i++) {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    const w = s / 2 ** 31 - 1
    b0 = 0.99886 * b0 + w * 0.0555179
    b1 = 0.99332 * b1 + w * 0.0750759
    b2 = 0.969 * b2 + w * 0.153852
    b3 = 0.8665 * b3 + w * 0.3104856
    b4 = 0.55 * b4 + w * 0.5329522
    b5 = -0.7616 * b5 - w * 0.016898
    x[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w * 0.5362
    b6 = w * 0.115926
  }
  const peak = x.reduce((m, v) => Math.max(m, Math.abs(v)), 0) || 1
  const out = new Uint8Array(n * 2)
  const o = new DataView(out.buffer)
  const scale = (32767 * 10 ** (-12 / 20)) / peak
  for (let i = 0; i < n; i++) o.setInt16(i * 2, Math.round((x[i] ?? 0) * scale), true)
  return out
}

/**
 * `pcm` with `noise` (looped from `offset` samples) under it, `snrDb` below it (RMS of each),
 * clipped: the household's phrase as a noisy room would hand it to the detector.
 */
export function underNoise(
  pcm: Uint8Array,
  noise: Uint8Array,
  snrDb: number,
  offset = 0,
): Uint8Array {
  const v = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength)
  const nv = new DataView(noise.buffer, noise.byteOffset, noise.byteLength)
  const n = pcm.length >> 1
  const m = noise.length >> 1
  const rms = (d: DataView, k: number) => {
    let e = 0
    for (let i = 0; i < k; i++) e += d.getInt16(i * 2, true) ** 2
    return Math.sqrt(e / Math.max(1, k))
  }
  const gain = rms(v, n) / ((rms(nv, m) || 1) * 10 ** (snrDb / 20))
  const out = new Uint8Array(n * 2)
  const o = new DataView(out.buffer)
  for (let i = 0; i < n; i++) {
    const x = v.getInt16(i * 2, true) + gain * nv.getInt16(((offset + i) % m) * 2, true)
    o.setInt16(i * 2, Math.max(-32768, Math.min(32767, Math.round(x))), true)
  }
  return out
}
