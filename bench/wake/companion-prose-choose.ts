// The companion re-trained against prose (issue 46, branch `companion4`): which hard-negative
// weight and threshold, chosen on the TUNING voices only, companion-choose.ts's way. Every model is
// trained (companion-train.ts, seeded) without companion-tune.ts's four held-out voice-speeds and
// replayed densely on their clips (a clip fires where two chunks in a row have the head ≥ 0.5, or
// the head ≥ the gate and the companion ≥ its threshold) and on the held-out prose stream
// (companion-prose.ts: texts no model trained on, every tuning voice; fires counted with 2 s of
// refractory time). The reference: the built model's recipe (the first set alone, 0.9 / 0.005)
// trained the same way. The holdout is never read here.
//
// The rule, stated before the holdout is measured: gate 0.005 (a higher one gave back one-breath
// wakes: branch `gate`); among the candidates (first set + commands said alone + training prose,
// hard negatives weighted 1, 2 or 3; threshold 0.9, 0.95 or 0.98) whose clean one-breath misses
// are within one clip of the reference's, noisy one-breath misses within 2 points of it, clean
// after-a-pause misses within one clip, which fire on no more commands said alone and no more
// often on the held-out prose stream: the fewest near-fires there (the chain's score ≥ 0.3, as
// the hard negatives are mined; 2 s apart); ties to fewer noisy one-breath misses, then the lower
// threshold. None eligible, or none with fewer near-fires than the reference: nothing is chosen.
// (Amended before any candidate was scored or the holdout read: the first run showed the
// reference firing 0 times on the 41 min stream, so fires alone could not rank anything.) The
// reference near-fired 0 times too, so nothing can be chosen; the candidate measured on the holdout
// for information only (not to ship) is the rule's order without the `near < reference` clause,
// fixed before the candidates' rows were read.
//
// Rule `fires` (branch `companion5`, written and committed before any candidate was scored or the
// holdout read): the held-out stream is companion-variants.ts's (espeak-ng variants no holdout voice
// uses, texts 7800–8190), the candidates train on the first set + commands said alone + the
// variants' wakes and prose (hard negatives mined from it weighted 1, 3 or 10; threshold 0.9, 0.95
// or 0.98). The reference must fire on the stream at least once (else nothing is chosen: the rule
// cannot rank). Eligible: the same clauses as above (clean one-breath misses within one clip of
// the reference's, noisy within 2 points, clean after-a-pause within one clip, commands said alone
// no more) and FEWER fires on the stream than the reference. Pick: the fewest fires there; ties to
// fewer near-fires, then fewer noisy one-breath misses, then the lower threshold.
// (Added after the ×1 and ×3 rows were read — each fires once on the 84 min stream, as the
// reference does, and on 2–3 commands said alone against its 1 — and before the ×10 rows: should
// the rule choose nothing, the model measured on the holdout for information, not to ship, is the
// heaviest weight at the recipe's threshold, hard ×10 at 0.9.)
//
// Rule `nearmiss` (branch `companion5`, second round; written and committed before any candidate
// was scored by it and before the holdout was read for any of them — though the ×10 rows at 0.9,
// 0.95, 0.98 and ×3 at 0.98 were already read under rule `fires`, above): the stream of 84 min
// cannot rank, so rank on the split's near-miss clips. Candidates: the variant recipe hard ×10 at
// 0.9, 0.95, 0.98, 0.99 and ×3 at 0.98, each trained without the split, seeded. Eligible: near-miss
// clips fired ≤ the reference's; commands said alone fired ≤ the reference's; clean one-breath
// misses within one clip of the reference's, noisy one-breath within 2 points, clean after-a-pause
// within one clip; and companion.test.ts's fixture check passing (companion-fixtures.ts, the
// candidate as it would be written). Pick: the fewest near-miss clips fired; ties to fewer fires on
// the variants' held-out stream, then the higher threshold. None eligible: nothing is chosen.
import type { CompanionModel } from '../../src/adapters/openwakeword/companion.js'
import { atThreshold } from '../../test/helpers/companion-fixtures.js'
import type { Kept } from './companion-data.js'
import { HARD_FROM, hardWeighted, proseHours, streamFires } from './companion-prose.js'
import { labelled, type TrainOptions, trainCompanion } from './companion-train.js'
import { CLIP_COLUMNS, denseScores, fires, SPLIT } from './companion-tune.js'

const GATE = 0.005
const THRESHOLDS = [0.9, 0.95, 0.98]
/** Rule `nearmiss`'s candidates: hard-negative weight → its thresholds. */
const NEARMISS_CANDIDATES: ReadonlyMap<number, readonly number[]> = new Map([
  [10, [0.9, 0.95, 0.98, 0.99]],
  [3, [0.98]],
])

const COLUMNS: [string, (k: Kept) => boolean][] = [
  ...CLIP_COLUMNS,
  ['command', (k) => k.group === 'command'],
]

export interface ProseRow {
  readonly model: string
  readonly hardWeight: number
  readonly threshold: number
  readonly fired: Record<string, number>
  /** Fires on the held-out prose stream. */
  readonly prose: number
  /** Near-fires there (the chain ≥ HARD_FROM). */
  readonly near: number
  /** Rule `nearmiss`: where the candidate, as it would be written, wakes on the fixtures. */
  readonly fixtures?: readonly string[] | undefined
}

/** Every candidate on the split and the held-out prose, and the rule's pick. */
export async function chooseAgainstProse(
  first: readonly Kept[],
  commands: readonly Kept[],
  prose: readonly Kept[],
  held: readonly Kept[],
  o: TrainOptions,
  weights: readonly number[],
  out: (s: string) => void,
  rule: 'near' | 'fires' | 'nearmiss' = 'near',
  /** Rule `nearmiss`: companion.test.ts's fixture check (companion-fixtures.ts). */
  fixtureWakes?: (m: CompanionModel) => Promise<string[]>,
): Promise<ProseRow | undefined> {
  const split = [...first, ...commands].filter((k) => SPLIT.test(k.voice))
  const totals: Record<string, number> = {}
  for (const [n, of] of COLUMNS) totals[n] = split.filter(of).length
  const hours = proseHours(held)
  out(
    `held out: ${split.length} clips (${COLUMNS.map(([n]) => `${n} ${totals[n]}`).join(', ')}); prose stream ${(hours * 60).toFixed(1)} min`,
  )
  out(
    `| model | threshold | ${COLUMNS.map(([n]) => n).join(' | ')} | prose fires (/h) | prose near-fires ≥ ${HARD_FROM} (/h) |`,
  )
  out(`|---|---|${COLUMNS.map(() => '---|').join('')}---|---|`)
  const rows: ProseRow[] = []
  const models: [string, number, readonly Kept[]][] = [
    ['built recipe', 0, first],
    ...weights.map((w): [string, number, readonly Kept[]] => [
      `+${rule === 'near' ? 'prose' : 'variants'}, hard ×${w}`,
      w,
      [...first, ...commands, ...prose],
    ]),
  ]
  for (const [name, w, all] of models) {
    const set = all.filter((k) => !SPLIT.test(k.voice))
    const base = labelled(set, o)
    const { samples, hard } = w === 0 ? { samples: base, hard: 0 } : hardWeighted(set, base, w)
    const t0 = process.cpuUsage()
    const m = trainCompanion(set, samples, o)
    const used = process.cpuUsage(t0)
    out(
      `(${name}: ${samples.length} windows, ${hard} hard; trained in ${((used.user + used.system) / 1e6).toFixed(0)} s of CPU)`,
    )
    const scored = split.map((k) => ({ k, p: denseScores(m, k) }))
    const stream = held.map((k) => ({ k, p: denseScores(m, k) }))
    const thresholds =
      w === 0 ? [0.9] : rule === 'nearmiss' ? (NEARMISS_CANDIDATES.get(w) ?? []) : THRESHOLDS
    for (const threshold of thresholds) {
      const fired: Record<string, number> = {}
      for (const [n, of] of COLUMNS)
        fired[n] = scored.filter(({ k, p }) => of(k) && fires(k.head, p, threshold, GATE)).length
      const p = stream.reduce((n, { k, p }) => n + streamFires(k.head, p, threshold, GATE), 0)
      const near = stream.reduce(
        (n, { k, p }) => n + streamFires(k.head, p, threshold, GATE, HARD_FROM),
        0,
      )
      const fixtures =
        rule === 'nearmiss' && fixtureWakes && w > 0
          ? await fixtureWakes(atThreshold(m, threshold, GATE))
          : undefined
      const r = { model: name, hardWeight: w, threshold, fired, prose: p, near, fixtures }
      rows.push(r)
      out(
        `| ${name} | ${threshold} | ${COLUMNS.map(([n]) => fired[n]).join(' | ')} | ${p} (${(p / hours).toFixed(1)}) | ${near} (${(near / hours).toFixed(1)}) |${fixtures ? ` fixtures: ${fixtures.length === 0 ? 'quiet' : fixtures.join(', ')} |` : ''}`,
      )
    }
  }
  const ref = rows[0] as ProseRow
  const miss = (r: ProseRow, c: string) => (totals[c] ?? 0) - (r.fired[c] ?? 0)
  const noisy = totals['wake noisy'] ?? 1
  if (rule === 'nearmiss') return nearMissPick(rows, ref, miss, noisy, out)
  const ok = rows.filter(
    (r) =>
      r.hardWeight > 0 &&
      (rule === 'fires' ? r.prose < ref.prose : r.prose <= ref.prose && r.near < ref.near) &&
      miss(r, 'wake clean') <= miss(ref, 'wake clean') + 1 &&
      (miss(r, 'wake noisy') - miss(ref, 'wake noisy')) / noisy <= 0.02 &&
      miss(r, 'pause clean') <= miss(ref, 'pause clean') + 1 &&
      (r.fired.command ?? 0) <= (ref.fired.command ?? 0),
  )
  ok.sort(
    (a, b) =>
      (rule === 'fires' ? a.prose - b.prose : 0) ||
      a.near - b.near ||
      miss(a, 'wake noisy') - miss(b, 'wake noisy') ||
      a.threshold - b.threshold,
  )
  if (rule === 'fires' && ref.prose === 0) {
    out('no choice: the reference never fires on the held-out stream, so the rule cannot rank')
    return undefined
  }
  const pick = ok[0]
  out(
    pick
      ? `chosen by the rule: hard ×${pick.hardWeight}, threshold ${pick.threshold}: ${pick.near} prose near-fires (${pick.prose} fires) against the reference's ${ref.near} (${ref.prose})`
      : 'no candidate meets the rule',
  )
  return pick
}

/** Rule `nearmiss` (above): the fewest near-miss clips fired, under its bars. */
function nearMissPick(
  rows: readonly ProseRow[],
  ref: ProseRow,
  miss: (r: ProseRow, c: string) => number,
  noisy: number,
  out: (s: string) => void,
): ProseRow | undefined {
  const near = (r: ProseRow) => r.fired.near ?? 0
  const ok = rows.filter(
    (r) =>
      r.hardWeight > 0 &&
      near(r) <= near(ref) &&
      (r.fired.command ?? 0) <= (ref.fired.command ?? 0) &&
      miss(r, 'wake clean') <= miss(ref, 'wake clean') + 1 &&
      (miss(r, 'wake noisy') - miss(ref, 'wake noisy')) / noisy <= 0.02 &&
      miss(r, 'pause clean') <= miss(ref, 'pause clean') + 1 &&
      r.fixtures?.length === 0,
  )
  ok.sort((a, b) => near(a) - near(b) || a.prose - b.prose || b.threshold - a.threshold)
  const pick = ok[0]
  out(
    pick
      ? `chosen by rule nearmiss: hard ×${pick.hardWeight}, threshold ${pick.threshold}: ${near(pick)} near-miss clips fired against the reference's ${near(ref)} (${pick.prose} fires on the variants' stream)`
      : 'no candidate meets rule nearmiss',
  )
  return pick
}
