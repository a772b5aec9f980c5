import { describe, expect, it } from 'vitest'
import { predict, trainLogistic } from '../../../src/adapters/openwakeword/logistic.js'

/** A seeded normal generator: the same data on every run. */
function normal(seed: number): () => number {
  let a = seed >>> 0
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), a | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (((t ^ (t >>> 14)) >>> 0) + 1) / 4_294_967_297
  }
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())
}

/**
 * Two clouds in `d` dimensions that differ along a few features only, on wildly different scales
 * (as embedding features are): class 1 is shifted by 3 deviations in the first five.
 */
function clouds(n1: number, n0: number, d: number, seed: number) {
  const r = normal(seed)
  const scale = Array.from({ length: d }, (_, j) => 10 ** ((j % 5) - 2))
  const x: Float32Array[] = []
  const y: number[] = []
  for (let i = 0; i < n1 + n0; i++) {
    const label = i < n1 ? 1 : 0
    x.push(
      Float32Array.from(
        { length: d },
        (_, j) => (r() + (label && j < 5 ? 3 : 0)) * (scale[j] ?? 1) + 7,
      ),
    )
    y.push(label)
  }
  return { x, y }
}

describe('the verifier trainer (logistic regression, L2)', () => {
  it('separates held-out samples of two separable classes, however unbalanced and scaled', () => {
    const train = clouds(40, 400, 200, 1)
    const test = clouds(200, 200, 200, 2)
    const model = trainLogistic(train.x, train.y)
    const p = test.x.map((x) => predict(model, x))
    const pos = p.filter((_, i) => test.y[i] === 1)
    const neg = p.filter((_, i) => test.y[i] === 0)
    const accuracy =
      (pos.filter((v) => v >= 0.5).length + neg.filter((v) => v < 0.5).length) / p.length
    expect(accuracy).toBeGreaterThan(0.97)
    // Balanced classes: a rare class is not swallowed by the common one.
    expect(pos.filter((v) => v >= 0.5).length / pos.length).toBeGreaterThan(0.95)
  })

  it('a stronger penalty gives smaller weights and less confident scores', () => {
    const { x, y } = clouds(50, 50, 40, 3)
    const loose = trainLogistic(x, y, { l2: 0.01 })
    const tight = trainLogistic(x, y, { l2: 10 })
    const norm = (w: Float64Array) => Math.hypot(...w)
    expect(norm(tight.weights)).toBeLessThan(norm(loose.weights))
    const first = x[0] ?? new Float32Array()
    expect(Math.abs(predict(tight, first) - 0.5)).toBeLessThan(
      Math.abs(predict(loose, first) - 0.5),
    )
  })

  it('a warm start from the full fit reaches the same model', () => {
    const { x, y } = clouds(30, 90, 60, 4)
    const full = trainLogistic(x, y, { maxIterations: 2000 })
    const warm = trainLogistic(x, y, { start: full, maxIterations: 20 })
    for (const s of x.slice(0, 20)) expect(predict(warm, s)).toBeCloseTo(predict(full, s), 3)
  })

  it('refuses data with one class only', () => {
    const { x } = clouds(10, 0, 5, 5)
    expect(() =>
      trainLogistic(
        x,
        x.map(() => 1),
      ),
    ).toThrow(/both classes/)
  })
})
