import { describe, expect, it } from 'vitest'
import {
  pausedHeadWindow,
  pausedWindows,
  quietestChunks,
} from '../../../src/adapters/openwakeword/synth-pause.js'

const BINS = 32
/** `n` mel frames, frame i holding the value i in every bin. */
function frames(n: number, value = (i: number) => i): Float32Array {
  const out = new Float32Array(n * BINS)
  for (let i = 0; i < n; i++) out.fill(value(i), i * BINS, (i + 1) * BINS)
  return out
}
/** Frame f of a [frames, 32] array. */
const frame = (x: Float32Array, f: number) => x[f * BINS]

describe('a synthesized pause: its frames and windows', () => {
  it('takes the quietest chunk of the recent frames as the room’s floor', () => {
    // Four chunks of 8 frames; the third from the end is the quietest.
    const levels = [5, 4, -3, 2]
    const x = frames(32, (i) => levels[Math.floor(i / 8)] ?? 0)
    const q = quietestChunks(x)
    expect(q).toHaveLength(8 * BINS)
    expect([...q].every((v) => v === -3)).toBe(true)
    // The two quietest, in the order they were heard.
    const two = quietestChunks(x, 2)
    expect(two).toHaveLength(16 * BINS)
    expect([frame(two, 0), frame(two, 8)]).toEqual([-3, 2])
    expect(() => quietestChunks(frames(7))).toThrow(/no whole chunk/)
  })

  it('keeps the real frames before the pause and fills the last j chunks with quiet ones', () => {
    const real = frames(100) // frames 0..99; the pause starts after frame 99
    const quiet = frames(8, (i) => -1 - i) // -1..-8, so the order within a chunk shows
    const ws = pausedWindows(real, quiet, 3)
    expect(ws).toHaveLength(3)
    ws.forEach((w, idx) => {
      const j = idx + 1
      expect(w).toHaveLength(76 * BINS)
      const realFrames = 76 - 8 * j
      // The newest real frames, in order, then j repeats of the quiet chunk.
      expect(frame(w, 0)).toBe(100 - realFrames)
      expect(frame(w, realFrames - 1)).toBe(99)
      for (let f = realFrames; f < 76; f++) expect(frame(w, f)).toBe(-1 - ((f - realFrames) % 8))
    })
    // j = 1 is the window a chunk of quiet after the real window ending at frame 99.
    expect(frame(ws[0] as Float32Array, 67)).toBe(99)
  })

  it('refuses frames and floors that cannot make a pause, naming what was wrong', () => {
    expect(() => pausedWindows(frames(67), frames(8), 1)).toThrow(/68 or more whole frames/)
    expect(() => pausedWindows(frames(76), frames(7), 1)).toThrow(/not whole chunks/)
    expect(() => pausedWindows(frames(76), frames(8), 0)).toThrow(/k must be 1 or more/)
  })

  it('puts the pause’s embeddings after the newest real ones in a head’s window', () => {
    const emb = (v: number) => new Float32Array(96).fill(v)
    const real = new Float32Array(16 * 96)
    for (let i = 0; i < 16; i++) real.fill(i, i * 96, (i + 1) * 96)
    const w = pausedHeadWindow(real, [emb(-1), emb(-2)], 16)
    expect(w).toHaveLength(16 * 96)
    const at = (i: number) => w[i * 96]
    expect(at(0)).toBe(2) // the two oldest real ones left the window
    expect(at(13)).toBe(15)
    expect(at(14)).toBe(-1)
    expect(at(15)).toBe(-2)
  })
})
