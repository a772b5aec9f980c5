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
