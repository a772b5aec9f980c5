import { describe, expect, it } from 'vitest'
import {
  type CompanionModel,
  companionScore,
} from '../../../src/adapters/openwakeword/companion.js'
import {
  type CompanionRecord,
  companionFor,
  companionOf,
} from '../../../src/adapters/openwakeword/companions.js'
import { EMBEDDING_SIZE } from '../../../src/adapters/openwakeword/features.js'
import { Heads } from '../../../src/adapters/openwakeword/heads.js'
import type { ModelSession } from '../../../src/adapters/openwakeword/model-session.js'
import { fixtureWakes } from '../../helpers/companion-fixtures.js'

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z))

/** A head whose every window scores `score`. */
function head(score: number): ModelSession {
  return {
    file: 'head.onnx',
    inputName: 'x',
    inputShape: [1, 16, EMBEDDING_SIZE],
    run: async () => Float32Array.of(score),
    close: async () => {},
  }
}

/** A companion reading 16 embeddings, two hidden units, that looks only at the newest value. */
function tiny(gate: number): CompanionModel {
  const n = 16 * EMBEDDING_SIZE
  const w1 = new Float32Array(n * 2)
  w1[(n - 1) * 2] = 2 // unit 0 ← the newest embedding's last value × 2
  w1[(n - 1) * 2 + 1] = -1 // unit 1 ← its negative
  return {
    window: 16,
    gate,
    hidden: 2,
    w1,
    b1: Float32Array.of(0.5, 0),
    w2: Float32Array.of(1.5, 3),
    b2: -1,
  }
}

describe('the companion head', () => {
  it('scores a window: ReLU hidden units, then the logistic', () => {
    const m = tiny(0)
    const w = new Float32Array(16 * EMBEDDING_SIZE)
    w[w.length - 1] = 1 // unit 0: 2 + 0.5 = 2.5; unit 1: −1 → 0
    expect(companionScore(m, w)).toBeCloseTo(sigmoid(-1 + 1.5 * 2.5), 6)
    w[w.length - 1] = -2 // unit 0: −4 + 0.5 → 0; unit 1: 2
    expect(companionScore(m, w)).toBeCloseTo(sigmoid(-1 + 3 * 2), 6)
    // A longer window: it reads its newest 16 embeddings.
    const longer = new Float32Array(22 * EMBEDDING_SIZE)
    longer[longer.length - 1] = 1
    expect(companionScore(m, longer)).toBeCloseTo(sigmoid(-1 + 1.5 * 2.5), 6)
  })

  it('is the larger score where the head reaches its gate, asked always on a coarse window', async () => {
    const window = new Float32Array(16 * EMBEDDING_SIZE)
    window[window.length - 1] = 1
    const companion = tiny(0.005)
    const high = sigmoid(-1 + 1.5 * 2.5)
    const under = new Heads([{ model: head(0.001), companion }], () => 1)
    expect(await under.run(window, true)).toEqual([expect.closeTo(0.001, 6)])
    expect(await under.run(window, false)).toEqual([expect.closeTo(high, 6)])
    const over = new Heads([{ model: head(0.01), companion }], () => 1)
    expect(await over.run(window, true)).toEqual([expect.closeTo(high, 6)])
    // Where the head scores higher, the head's score stands.
    const sure = new Heads([{ model: head(0.99), companion }], () => 1)
    expect(await sure.run(window, true)).toEqual([expect.closeTo(0.99, 6)])
    // Without a companion, the head's score is all there is.
    const alone = new Heads([{ model: head(0.01) }], () => 1)
    expect(await alone.run(window, true)).toEqual([expect.closeTo(0.01, 6)])
  })

  it('ships for hey_jarvis, reading its 16 × 96 window, and for no other head', () => {
    const m = companionFor('hey_jarvis')
    expect(m?.window).toBe(16)
    expect(m?.w1.length).toBe(16 * EMBEDDING_SIZE * (m?.hidden ?? 0))
    expect(m?.gate).toBeGreaterThan(0)
    expect(companionFor('alexa')).toBeUndefined()
  })

  it('refuses a file of another shape, naming the fix', () => {
    const bad: CompanionRecord = {
      kind: 'nocturn-wake-companion',
      version: 1,
      head: 'hey_jarvis_v0.1.onnx',
      window: 16,
      gate: 0.005,
      hidden: 4,
      w1: Buffer.alloc(8).toString('base64'),
      b1: Buffer.alloc(16).toString('base64'),
      w2: Buffer.alloc(16).toString('base64'),
      b2: 0,
      trained: {},
    }
    expect(() => companionOf(bad)).toThrow(/not a 16 × 96 → 4 → 1 network.*wake-companion/)
  })

  // A re-trained companion once woke on "Set a timer for ten minutes." (fixtures/vad, espeak-ng
  // en-us+f2 in a quiet room) at half the starts, and a load test that talks those fixtures in a
  // loop turned flaky (bench/RESULTS.md, "the companion re-trained…"): the shipped one must not.
  // The same check the bench asks of every candidate before choosing one (companion-fixtures.ts).
  it('wakes on none of the plain-speech fixtures, wherever the chunks fall', async () => {
    const m = companionFor('hey_jarvis')
    expect(m).toBeDefined()
    if (m) expect(await fixtureWakes(m)).toEqual([])
  }, 60_000)
})
