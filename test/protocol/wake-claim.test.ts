import { describe, expect, it } from 'vitest'
import {
  claimNumbers,
  outranks,
  PROTOCOL_VERSION,
  wakeClaimSchema,
} from '../../src/protocol/index.js'

const wire = {
  v: PROTOCOL_VERSION,
  device: 'kitchen',
  id: 'Jm3uQ0xv9m2bGJ3kZc8yTq1w',
  level: -23,
  score: 0.935,
  at: 1764489600123,
}

describe('wake claims: the numbers on the wire and the rule every speaker applies', () => {
  it('of two different speakers exactly one outranks the other, whatever their numbers', () => {
    const devices = ['hall', 'kitchen', 'Kitchen', 'kitchen-2']
    const levels = [-120, -31, -30, 0]
    const scores = [0, 0.5, 0.501, 1]
    const claims = devices.flatMap((device) =>
      levels.flatMap((level) => scores.map((score) => ({ device, level, score }))),
    )
    for (const a of claims) {
      for (const b of claims) {
        if (a.device === b.device) expect(outranks(a, b) && outranks(b, a)).toBe(false)
        else expect(outranks(a, b)).toBe(!outranks(b, a))
      }
    }
  })

  it('louder first, then surer, then the device id that sorts first', () => {
    expect(
      outranks({ device: 'z', level: -20, score: 0.5 }, { device: 'a', level: -21, score: 1 }),
    ).toBe(true)
    expect(
      outranks({ device: 'z', level: -20, score: 0.9 }, { device: 'a', level: -20, score: 0.8 }),
    ).toBe(true)
    expect(
      outranks({ device: 'a', level: -20, score: 0.9 }, { device: 'b', level: -20, score: 0.9 }),
    ).toBe(true)
  })

  it('the speaker answering (a barge-in on its session) outranks any claim that is not, however loud', () => {
    const answering = { device: 'z', level: -60, score: 0.5, answering: true as const }
    expect(outranks(answering, { device: 'a', level: 0, score: 1 })).toBe(true)
    expect(outranks({ device: 'a', level: 0, score: 1 }, answering)).toBe(false)
    // Two answering: the ordinary rule between them, still exactly one first.
    const other = { device: 'a', level: -30, score: 0.9, answering: true as const }
    expect(outranks(other, answering)).toBe(true)
    expect(outranks(answering, other)).toBe(false)
    expect(wakeClaimSchema.safeParse({ ...wire, answering: true }).success).toBe(true)
    expect(wakeClaimSchema.safeParse({ ...wire, answering: false }).success).toBe(false)
  })

  it('rounds level to whole dB and score to 0.001, and keeps both in range (−∞ dB is silence)', () => {
    expect(claimNumbers(-23.4, 0.93456)).toEqual({ level: -23, score: 0.935 })
    expect(claimNumbers(-0.2, 1.2)).toEqual({ level: 0, score: 1 })
    expect(Object.is(claimNumbers(-0.2, 1).level, -0)).toBe(false)
    expect(claimNumbers(Number.NEGATIVE_INFINITY, Number.NaN)).toEqual({ level: -120, score: 0 })
    expect(claimNumbers(-300, -1)).toEqual({ level: -120, score: 0 })
  })
})
