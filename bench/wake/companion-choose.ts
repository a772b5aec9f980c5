// The companion re-trained with companion-more.ts's clips (issue 46, branch `companion3`): which
// near-miss weight, threshold and gate, chosen on the TUNING voices only. Every candidate is
// trained (companion-train.ts, seeded) without companion-tune.ts's four held-out voice-speeds and
// replayed densely on their clips — the first set's and the extra set's (every chunk's window, the
// cached head score beside it; a clip fires where two chunks in a row have the head ≥ 0.5, or the
// head ≥ the gate and the companion ≥ its threshold). The reference: the built model's recipe
// (the first set alone, near-miss weight 1, 0.9, 0.005) trained the same way. The holdout is never
// read here.
//
// The rule, stated before the holdout is measured: among the candidates (the extra set in) whose
// gate is at least the built 0.005 (a lower gate fired on ordinary speech on the holdout, where
// the split's 88 fortunes could not show it: "the companion's threshold and gate re-chosen"), whose
// clean one-breath misses are ≤ 5 %, which fire on no fortune, and which fire on no more near-miss
// clips and (added after the first candidate woke on a test fixture's command) no more
// commands said alone than the reference at 0.9 / 0.005: the fewest misses over the after-a-pause clips (clean
// and noisy) and the noisy one-breath clips together; ties to fewer near-miss clips.
import type { Kept } from './companion-data.js'
import { labelled, type TrainOptions, trainCompanion } from './companion-train.js'
import { denseScores, fires, SPLIT } from './companion-tune.js'

const THRESHOLDS = [0.8, 0.9, 0.95, 0.98, 0.99, 0.995]
const GATES = [0.002, 0.005, 0.01, 0.02]

const COLUMNS: [string, (k: Kept) => boolean][] = [
  ['wake clean', (k) => k.group === 'wake' && k.noise === 'clean'],
  ['wake noisy', (k) => k.group === 'wake' && k.noise !== 'clean'],
  ['wake babble', (k) => k.group === 'wake' && k.noise.startsWith('babble')],
  ['pause clean', (k) => k.group === 'pause' && (k.noise === 'clean' || k.noise === 'room')],
  ['pause noisy', (k) => k.group === 'pause' && k.noise !== 'clean' && k.noise !== 'room'],
  ['pause babble', (k) => k.group === 'pause' && k.noise.startsWith('babble')],
  ['near', (k) => k.group === 'near'],
  ['prose', (k) => k.group === 'prose'],
  ['command', (k) => k.group === 'command'],
]

interface Candidate {
  readonly name: string
  /** With companion-more.ts's clips in training. */
  readonly more: boolean
  readonly nearWeight: number
}

interface Row {
  readonly model: string
  readonly more: boolean
  readonly nearWeight: number
  readonly threshold: number
  readonly gate: number
  readonly fired: Record<string, number>
}

/** Every candidate's curve on the held-out tuning clips, and the rule's pick. */
export function chooseCompanion(
  first: readonly Kept[],
  more: readonly Kept[],
  candidates: readonly Candidate[],
  o: TrainOptions,
  out: (s: string) => void,
): Row | undefined {
  const held = [...first, ...more].filter((k) => SPLIT.test(k.voice))
  const totals: Record<string, number> = {}
  for (const [n, of] of COLUMNS) totals[n] = held.filter(of).length
  out(`held out: ${held.length} clips (${COLUMNS.map(([n]) => `${n} ${totals[n]}`).join(', ')})`)
  out(`| model | threshold | gate | ${COLUMNS.map(([n]) => n).join(' | ')} |`)
  out(`|---|---|---|${COLUMNS.map(() => '---|').join('')}`)
  const rows: Row[] = []
  const line = (r: Row) =>
    out(
      `| ${r.model} | ${Number.isNaN(r.threshold) ? 'head alone' : r.threshold} | ${Number.isNaN(r.gate) ? '—' : r.gate} | ${COLUMNS.map(([n]) => r.fired[n]).join(' | ')} |`,
    )
  for (const c of candidates) {
    const set = (c.more ? [...first, ...more] : first).filter((k) => !SPLIT.test(k.voice))
    const t0 = process.cpuUsage()
    const m = trainCompanion(set, labelled(set, o), { ...o, nearWeight: c.nearWeight })
    const used = process.cpuUsage(t0)
    out(`(${c.name}: trained in ${((used.user + used.system) / 1e6).toFixed(0)} s of CPU)`)
    const scored = held.map((k) => ({ k, p: denseScores(m, k) }))
    const count = (t: number, gate: number) => {
      const fired: Record<string, number> = {}
      for (const [n, of] of COLUMNS)
        fired[n] = scored.filter(({ k, p }) => of(k) && fires(k.head, p, t, gate)).length
      return fired
    }
    if (rows.length === 0) {
      const alone = { ...c, model: 'head alone', threshold: Number.NaN, gate: Number.NaN }
      line({ ...alone, fired: count(2, 1) })
    }
    for (const threshold of THRESHOLDS)
      for (const gate of GATES) {
        const r = { ...c, model: c.name, threshold, gate, fired: count(threshold, gate) }
        rows.push(r)
        line(r)
      }
  }
  const reference = rows.find((r) => !r.more && r.threshold === 0.9 && r.gate === 0.005)
  if (!reference) return undefined
  const misses = (r: Row) =>
    (totals['pause clean'] ?? 0) -
    (r.fired['pause clean'] ?? 0) +
    (totals['pause noisy'] ?? 0) -
    (r.fired['pause noisy'] ?? 0) +
    (totals['wake noisy'] ?? 0) -
    (r.fired['wake noisy'] ?? 0)
  const ok = rows.filter(
    (r) =>
      r.more &&
      r.gate >= 0.005 &&
      (totals['wake clean'] ?? 0) - (r.fired['wake clean'] ?? 0) <=
        0.05 * (totals['wake clean'] ?? 0) &&
      (r.fired.prose ?? 0) === 0 &&
      (r.fired.command ?? 0) <= (reference.fired.command ?? 0) &&
      (r.fired.near ?? 0) <= (reference.fired.near ?? 0),
  )
  ok.sort((a, b) => misses(a) - misses(b) || (a.fired.near ?? 0) - (b.fired.near ?? 0))
  out(
    `reference (the built recipe, 0.9 / 0.005): ${misses(reference)} misses, near ${reference.fired.near}`,
  )
  const pick = ok[0]
  out(
    pick
      ? `chosen by the rule: ${pick.model}, threshold ${pick.threshold}, gate ${pick.gate}: ${misses(pick)} misses, near ${pick.fired.near}`
      : 'no candidate meets the rule',
  )
  return pick
}
