import { describe, expect, it } from 'vitest'
import { atSpeed, cutShort } from '../../../src/adapters/openwakeword/augment.js'

const RATE = 16_000

/** S16LE of `samples`. */
function pcmOf(samples: readonly number[]): Uint8Array {
  const out = new Uint8Array(samples.length * 2)
  const v = new DataView(out.buffer)
  samples.forEach((s, i) => {
    v.setInt16(i * 2, s, true)
  })
  return out
}

function samplesOf(pcm: Uint8Array): number[] {
  const v = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength)
  return Array.from({ length: pcm.length >> 1 }, (_, i) => v.getInt16(i * 2, true))
}

/** 0.5 s of silence, `voiced` s of a 440 Hz tone at `amplitude`, 0.5 s of silence. */
function toneInSilence(voiced: number, amplitude: number): Uint8Array {
  const lead = RATE / 2
  const n = Math.round(voiced * RATE)
  return pcmOf(
    Array.from({ length: lead * 2 + n }, (_, i) =>
      i < lead || i >= lead + n
        ? 0
        : Math.round(amplitude * Math.sin((2 * Math.PI * 440 * (i - lead)) / RATE)),
    ),
  )
}

describe('what enrolment makes of a few recordings', () => {
  it('plays a clip faster or slower, pitch with it, by interpolation', () => {
    // A 400 Hz tone, 1 s: at 1.1 it is 10 % shorter and 10 % higher, at 0.9 the other way.
    const clip = pcmOf(
      Array.from({ length: RATE }, (_, i) =>
        Math.round(8000 * Math.sin((2 * Math.PI * 400 * i) / RATE)),
      ),
    )
    for (const f of [0.9, 1.1]) {
      const out = samplesOf(atSpeed(clip, f))
      expect(out.length).toBe(Math.floor((RATE - 1) / f) + 1)
      let crossings = 0
      for (let i = 1; i < out.length; i++)
        if ((out[i - 1] ?? 0) < 0 && (out[i] ?? 0) >= 0) crossings++
      const hz = crossings / (out.length / RATE)
      expect(hz).toBeGreaterThan(400 * f - 3)
      expect(hz).toBeLessThan(400 * f + 3)
    }
    // Between two samples, the line between them; the last sample is kept.
    expect(samplesOf(atSpeed(pcmOf([0, 100, 200, 300]), 0.5))).toEqual([
      0, 50, 100, 150, 200, 250, 300,
    ])
    expect(samplesOf(atSpeed(pcmOf([0, 100, 200, 300, 400]), 2))).toEqual([0, 200, 400])
  })

  it('cuts a phrase short at a share of its voiced span, from the clip start', () => {
    const clip = toneInSilence(1, 8000)
    const cut = cutShort(clip, 0.55)
    // 0.5 s of lead and 55 % of the 1 s span, to the 10 ms frame.
    expect((cut?.length ?? 0) / 2 / RATE).toBeCloseTo(0.5 + 0.55, 2)
    expect(cutShort(toneInSilence(0.05, 8000), 0.55)).toBeUndefined()
    expect(cutShort(new Uint8Array(RATE), 0.55)).toBeUndefined()
  })
})
