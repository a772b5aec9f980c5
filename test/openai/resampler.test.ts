import { describe, expect, it } from 'vitest'
import { Upsampler16to24 } from '../../src/adapters/openai/resampler.js'

function pcm(samples: number[]): Uint8Array {
  return new Uint8Array(new Int16Array(samples).buffer)
}
const samples = (u: Uint8Array) => Array.from(new Int16Array(u.slice().buffer))

describe('16 → 24 kHz upsampler', () => {
  it('every frame is exactly 1.5 times as long, and a ramp stays a ramp across frame edges', () => {
    const up = new Upsampler16to24()
    const out: number[] = []
    for (let f = 0; f < 3; f++) {
      const frame = pcm(Array.from({ length: 4 }, (_, i) => (f * 4 + i) * 300))
      const o = up.push(frame)
      expect(o.byteLength).toBe(12)
      out.push(...samples(o))
    }
    // Input 0, 300, 600 … at 16 kHz; output every 2/3 of an input sample, from a silent sample
    // before the first: 0, 0, then 100, 300, 500 … (the ramp at 200 a step), frame edges unseen.
    expect(out).toEqual([0, 0, ...Array.from({ length: 16 }, (_, k) => 100 + 200 * k)])
  })

  it('reads a frame lent at an odd offset', () => {
    const up = new Upsampler16to24()
    const buf = new Uint8Array(9)
    buf.set(pcm([100, 100, 100, 100]), 1)
    expect(samples(up.push(buf.subarray(1)))).toEqual([0, 66, 100, 100, 100, 100])
  })
})
