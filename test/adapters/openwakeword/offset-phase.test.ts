import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { OpenWakeWordDetector } from '../../../src/adapters/openwakeword/detector.js'
import type { WakeDetection } from '../../../src/ports/wake-word.js'
import { FIXTURES, phasedDetector, silence, wavPcm } from '../../helpers/wake.js'

const open: OpenWakeWordDetector[] = []
afterAll(async () => {
  for (const d of open) await d.close()
})

/**
 * espeak-ng's en-us+m3 voice at 170 words a minute saying "hey jarvis" (1 s of silence either
 * side): started 40 ms into a chunk, the aligned chunks' best run of two stays near 0.07, while
 * windows 40 ms earlier hold 0.69 for two chunks (bench/wake/offset-search.ts found it).
 */
const CLIP = wavPcm(join(FIXTURES, 'hey_jarvis-m3-170.wav'))
/** 3 s of silence first (a whole chunk count): the detector's start is out of every window. */
const LEAD_MS = 3040

async function hear(o: Partial<Parameters<typeof phasedDetector>[0]>, leadMs = LEAD_MS) {
  const wakes: WakeDetection[] = []
  const scores = new Map<number, number>()
  const offset = new Map<number, number>()
  const d = await phasedDetector({
    threshold: 0.5,
    onWake: (w) => wakes.push(w),
    onScores: (s, at) => scores.set(at, s[0] ?? 0),
    onOffsetScores: (s, at) => offset.set(at, s[0] ?? 0),
    ...o,
  })
  open.push(d)
  await d.scoreRecorded(Buffer.concat([silence(leadMs), CLIP]))
  return { wakes, scores, offset, stats: d.stats() }
}

/** The best score a run of two chunks holds. */
function run2(scores: Map<number, number>): number {
  const s = [...scores.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v)
  return Math.max(0, ...s.slice(1).map((v, i) => Math.min(v, s[i] ?? 0)))
}

describe("the detector's second phase, 40 ms off the chunks", () => {
  it('fires on a phrase whose peak falls between chunks, where the aligned chunks alone stay below the threshold', async () => {
    const without = await hear({ offsetPhase: false })
    const withIt = await hear({ coarseHop: 2 })
    // Without it: the aligned chunks never hold 0.5 for two chunks, and nothing fires.
    expect(run2(without.scores)).toBeLessThan(0.5)
    expect(without.wakes).toEqual([])
    expect(without.stats.offsetScores).toBe(0)
    // With it (the service's default, coarse scoring): the wake, on a window 40 ms off the chunks.
    expect(withIt.wakes).toHaveLength(1)
    const wake = withIt.wakes[0] as WakeDetection
    expect(wake.score).toBeGreaterThanOrEqual(0.5)
    expect(wake.heardAtMs % 80).toBe(40)
    expect(withIt.offset.get(wake.heardAtMs)).toBe(wake.score)
    // Its phase-0 scores are what the detector without it gave, chunk by chunk.
    for (const [at, s] of withIt.scores) {
      if (s >= 0.01) expect(s, `chunk ending at ${at}`).toBeCloseTo(without.scores.get(at) ?? -1, 6)
    }
    // Only near the phrase: a handful of second-phase scores, not one per chunk.
    expect(withIt.stats.offsetScores).toBeGreaterThan(1)
    expect(withIt.stats.offsetScores).toBeLessThan(withIt.stats.chunksScored / 3)
    process.stdout.write(
      `aligned best run ${run2(without.scores).toFixed(3)}; wake ${wake.score.toFixed(3)} at ${wake.heardAtMs}; ${withIt.stats.offsetScores} second-phase scores of ${withIt.stats.chunksScored} chunks\n`,
    )
  }, 120_000)

  it('scores exactly what a detector whose chunks fell 20, 40 or 60 ms later scores', async () => {
    // Every further phase always on (share 0): each window p × 20 ms before a chunk's end, against
    // the aligned scores of the same audio started p × 20 ms later (the window ending at t here
    // ends at t + 20p there).
    const offset = await hear({ offsetPhase: 0, offsetPhases: [1, 2, 3] })
    for (const p of [1, 2, 3]) {
      const later = await hear({ offsetPhase: false }, LEAD_MS + 20 * p)
      let compared = 0
      let worst = 0
      for (const [at, s] of offset.offset) {
        // Past the start: the first windows reach back before the detector's first chunk, where
        // the two start differently (mel frames of ones, silence).
        if (at < 2600 || (at + 20 * p) % 80 !== 0) continue
        const l = later.scores.get(at + 20 * p)
        expect(l, `phase ${p}, window ending at ${at}`).toBeDefined()
        worst = Math.max(worst, Math.abs(s - (l ?? 0)))
        compared++
      }
      expect(compared, `phase ${p}`).toBeGreaterThan(30)
      expect(worst, `phase ${p}`).toBeLessThan(1e-6)
    }
  }, 120_000)

  it("hands its windows to the household's verifier as it does the aligned ones", async () => {
    // A verifier that turns every window away: the head's 0.69 does not fire through it.
    const vetoed: number[] = []
    const heard = await hear({
      coarseHop: 2,
      verifier: {
        gate: 0.3,
        score: (_window, head) => {
          vetoed.push(head)
          return 0
        },
      },
    })
    expect(heard.wakes).toEqual([])
    expect(vetoed.some((h) => h >= 0.5)).toBe(true)
    // What it was handed (the gate and above) it scored 0; below the gate the head's score stands.
    expect(Math.max(...heard.offset.values())).toBeLessThan(0.3)
  }, 120_000)
})
