import { describe, expect, it } from 'vitest'
import { Backoff, type BackoffPolicy } from '../../src/core/backoff.js'

function delays(b: Backoff, n: number, livedMs?: number): number[] {
  return Array.from({ length: n }, () => b.next(livedMs))
}

describe('Backoff', () => {
  it('doubles from the initial delay up to the cap, and stays there', () => {
    const b = new Backoff({ initialMs: 250, maxMs: 8000 })
    expect(delays(b, 8)).toEqual([250, 500, 1000, 2000, 4000, 8000, 8000, 8000])
    expect(b.failures).toBe(8)
  })

  it('takes another factor, or a linear step', () => {
    expect(delays(new Backoff({ initialMs: 100, maxMs: 10_000, factor: 3 }), 4)).toEqual([
      100, 300, 900, 2700,
    ])
    const linear = new Backoff({ initialMs: 1000, maxMs: 60_000, factor: 1, stepMs: 1000 })
    expect(delays(linear, 4)).toEqual([1000, 2000, 3000, 4000])
  })

  it('reset starts again from the initial delay', () => {
    const b = new Backoff({ initialMs: 20, maxMs: 200 })
    expect(delays(b, 3)).toEqual([20, 40, 80])
    b.reset()
    expect(b.failures).toBe(0)
    expect(delays(b, 2)).toEqual([20, 40])
  })

  it('a failed run that lasted the healthy time resets before it counts', () => {
    const b = new Backoff({ initialMs: 250, maxMs: 8000, healthyMs: 10_000 })
    expect(delays(b, 3, 50)).toEqual([250, 500, 1000])
    expect(b.next(10_000)).toBe(250)
    expect(b.next(9_999)).toBe(500)
    // Without a healthy time, how long a run lasted does not matter.
    const plain = new Backoff({ initialMs: 250, maxMs: 8000 })
    expect(delays(plain, 3, 1_000_000)).toEqual([250, 500, 1000])
  })

  it('peek tells the next delay without counting a failure', () => {
    const b = new Backoff({ initialMs: 3000, maxMs: 48_000 })
    expect(b.peek()).toBe(3000)
    expect(b.peek()).toBe(3000)
    b.next()
    expect(b.peek()).toBe(6000)
  })

  it('jitter spreads each delay by the given fraction either way, after the cap', () => {
    const policy: BackoffPolicy = { initialMs: 1000, maxMs: 4000, jitter: 0.25 }
    expect(delays(new Backoff(policy, () => 0), 4)).toEqual([750, 1500, 3000, 3000])
    expect(delays(new Backoff(policy, () => 0.5), 4)).toEqual([1000, 2000, 4000, 4000])
    // random() < 1, so the top of the range is approached, never passed.
    expect(delays(new Backoff(policy, () => 0.999_999), 4)).toEqual([1250, 2500, 5000, 5000])
  })

  it('is exhausted after the given number of failures in a row, until reset', () => {
    const b = new Backoff({ initialMs: 1000, maxMs: 60_000, giveUpAfter: 3 })
    const seen = Array.from({ length: 3 }, () => [b.next(), b.exhausted])
    expect(seen).toEqual([
      [1000, false],
      [2000, false],
      [4000, true],
    ])
    b.reset()
    expect(b.exhausted).toBe(false)
    expect(b.next()).toBe(1000)
    // Without a limit it never is.
    const endless = new Backoff({ initialMs: 1, maxMs: 2 })
    delays(endless, 1000)
    expect(endless.exhausted).toBe(false)
  })

  it('a long run of failures stays at the cap (no overflow to Infinity or NaN)', () => {
    const b = new Backoff({ initialMs: 250, maxMs: 5000, jitter: 0.25 }, () => 0.5)
    const all = delays(b, 2000)
    expect(all.at(-1)).toBe(5000)
    expect(all.every((d) => Number.isFinite(d))).toBe(true)
  })
})
