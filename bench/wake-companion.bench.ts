// The companion head (issue 46): "hey jarvis" run straight into a command, which the pretrained
// hey_jarvis_v0.1 scores low. `nice -n 10 npm run bench -- wake-companion` (BENCH_ONLY=data|train|
// measure for one part; ~25 min here the first time, the TTS and the embeddings cached after):
//   diagnose why the built companion misses the holdout's after-a-pause wakes (chunk by chunk,
//            wake/companion-diagnose.ts; nothing is chosen there);
//   tune     its threshold and gate on a split of the tuning voices (wake/companion-tune.ts);
//   more     a second training set: longer pauses, babble, re-pitched espeak-ng (wake/companion-more.ts);
//   choose   near-miss weight, threshold and gate with that set in, on the split, by a stated rule
//            (wake/companion-choose.ts);
//   prose    hard-negative weight and threshold with prose, commands said alone and hard negatives
//            in (wake/companion-prose.ts), on the split and a held-out prose stream, by a stated
//            rule (wake/companion-prose-choose.ts);
//   variants espeak-ng variants no holdout voice uses (wake/companion-variants.ts): what the miner
//            finds in their prose, then hard-negative weight and threshold chosen on the split and
//            their held-out prose stream by companion-prose-choose.ts's rule `fires`;
//   nearmiss the variant recipe's weight (×10, ×3) and threshold chosen by rule `nearmiss`: the
//            fewest near-miss clips fired on the split, companion.test.ts's fixture check passing;
//   data     the training set from the TUNING voices only (wake/companion-data.ts), cached under
//            var/bench-wake/companion;
//   train    the network on it (wake/companion-train.ts), seeded, written to
//            src/adapters/openwakeword/hey-jarvis-companion.json: the same data, the same file;
//   measure  on the HOLDOUT voices, as wake-holdout.bench.ts measures (wake/companion-measure.ts):
//            the pretrained head alone and with the companion, the same clips and streams.
// Debian: espeak-ng flite festival festvox-kdlpc16k festvox-us-slt-hts sox fortunes pocketsphinx.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CompanionModel } from '../src/adapters/openwakeword/companion.js'
import { type CompanionRecord, companionOf } from '../src/adapters/openwakeword/companions.js'
import { fixtureWakes } from '../test/helpers/companion-fixtures.js'
import { missingCommands } from '../test/helpers/system.js'
import { machineLine } from './machine.js'
import { chooseCompanion } from './wake/companion-choose.js'
import { companionData } from './wake/companion-data.js'
import { diagnoseCompanion } from './wake/companion-diagnose.js'
import { measureCompanion } from './wake/companion-measure.js'
import { companionCommands, companionMore } from './wake/companion-more.js'
import { builtCompanion, hardWeighted, heldProse, trainingProse } from './wake/companion-prose.js'
import { chooseAgainstProse } from './wake/companion-prose-choose.js'
import { labelled, trainCompanion } from './wake/companion-train.js'
import {
  chosen,
  columnTotals,
  gateChosen,
  heldTotals,
  tuneCompanion,
} from './wake/companion-tune.js'
import { reportMining, variantHeld, variantProse, variantWakes } from './wake/companion-variants.js'

if (missingCommands('espeak-ng', 'flite', 'text2wave', 'sox', 'pocketsphinx_continuous')) {
  process.exit(0)
}
const only = process.env.BENCH_ONLY ?? ''
const out = (s: string) => process.stdout.write(`${s}\n`)
const FILE = join(
  import.meta.dirname,
  '..',
  'src',
  'adapters',
  'openwakeword',
  'hey-jarvis-companion.json',
)
/**
 * 16 hidden units, windows ending 1 to 5 chunks after the phrase's end as positives (not earlier:
 * a wake at the phrase's end leaves the local check a pre-roll without all of "jarvis"), 4 epochs
 * (picked, not swept); its own threshold 0.9 (folded into its output bias so it crosses the
 * head's 0.5 there) and the gate 0.005, chosen for a first cut on a split of the tuning voices
 * (bench/RESULTS.md, "a companion head trained with speech after the phrase"). Re-chosen for this
 * model by BENCH_ONLY=tune (near-miss windows 4×, 0.99, 0.001), that setting gave back one-breath
 * misses on the holdout and was not kept ("the companion's threshold and gate re-chosen"). Trained
 * with the extra sets too (WAKE_COMPANION_MORE=1, near-misses 2×, chosen by BENCH_ONLY=choose), it
 * missed fewer holdout wakes in babble but woke on a test fixture's plain command: not kept either
 * ("the companion re-trained for a wake said after a pause and in babble").
 */
const SETTINGS = {
  hidden: Number(process.env.WAKE_COMPANION_HIDDEN ?? 16),
  epochs: Number(process.env.WAKE_COMPANION_EPOCHS ?? 4),
  posFrom: Number(process.env.WAKE_COMPANION_POS_FROM ?? 1),
  posTo: Number(process.env.WAKE_COMPANION_POS_TO ?? 5),
  threshold: Number(process.env.WAKE_COMPANION_THRESHOLD ?? 0.9),
  gate: Number(process.env.WAKE_COMPANION_GATE ?? 0.005),
  nearWeight: Number(process.env.WAKE_COMPANION_NEAR_WEIGHT ?? 1),
  /** companion-more.ts's clips in training too. */
  more: process.env.WAKE_COMPANION_MORE === '1',
  /** companion-prose.ts's training prose and companion-more.ts's commands said alone in too. */
  prose: process.env.WAKE_COMPANION_PROSE === '1',
  /** companion-variants.ts's wakes and prose (and the commands said alone) in too. */
  variants: process.env.WAKE_COMPANION_VARIANTS === '1',
  /** The weight of companion-prose.ts's hard negatives (with `prose` or `variants`). */
  hardWeight: Number(process.env.WAKE_COMPANION_HARD_WEIGHT ?? 1),
  seed: 46,
}

const b64 = (a: Float32Array) => {
  const b = Buffer.alloc(a.length * 4)
  for (const [i, v] of a.entries()) b.writeFloatLE(v, i * 4)
  return b.toString('base64')
}

function record(m: CompanionModel, trained: Record<string, unknown>): CompanionRecord {
  // Its own threshold t becomes the head's 0.5: the logit moves by −logit(t).
  const t = SETTINGS.threshold
  return {
    kind: 'nocturn-wake-companion',
    version: 1,
    head: 'hey_jarvis_v0.1.onnx',
    window: m.window,
    gate: SETTINGS.gate,
    hidden: m.hidden,
    w1: b64(m.w1),
    b1: b64(m.b1),
    w2: b64(m.w2),
    b2: m.b2 - Math.log(t / (1 - t)),
    trained,
  }
}

out(`# the companion head · ${machineLine()}`)
if (only === 'diagnose') {
  const { default: r } = await import('../src/adapters/openwakeword/hey-jarvis-companion.json', {
    with: { type: 'json' },
  })
  await diagnoseCompanion(companionOf(r as CompanionRecord), out)
  process.exit(0)
}
const kept = only === 'measure' ? [] : await companionData(out)
const more =
  only === 'more' || only === 'choose' || (SETTINGS.more && only !== 'measure')
    ? [
        ...(await companionMore(out)),
        // WAKE_COMPANION_COMMANDS=0: without the commands said alone (the first candidate).
        ...(process.env.WAKE_COMPANION_COMMANDS === '0' ? [] : await companionCommands(out)),
      ]
    : []
const proseSets =
  only === 'prose' || (SETTINGS.prose && only !== 'measure')
    ? {
        commands: await companionCommands(out),
        prose: await trainingProse(out),
        held: only === 'prose' ? await heldProse(out) : [],
      }
    : undefined
if (only === 'prose' && proseSets) {
  await chooseAgainstProse(
    kept,
    proseSets.commands,
    proseSets.prose,
    proseSets.held,
    SETTINGS,
    (process.env.WAKE_COMPANION_PROSE_WEIGHTS ?? '1,2,3').split(',').map(Number),
    out,
  )
}
const variantSets =
  only === 'variants' || only === 'nearmiss' || (SETTINGS.variants && only !== 'measure')
    ? {
        commands: await companionCommands(out),
        wakes: [
          ...(await variantWakes(out)),
          // WAKE_COMPANION_VARIANT_NEAR=1: their near-miss names too, as negatives.
          ...(process.env.WAKE_COMPANION_VARIANT_NEAR === '1'
            ? await variantWakes(out, 'near')
            : []),
        ],
        prose: await variantProse(out),
        held: only === 'variants' || only === 'nearmiss' ? await variantHeld(out) : [],
      }
    : undefined
// variants: rule `fires` over WAKE_COMPANION_VARIANT_WEIGHTS; nearmiss: rule `nearmiss`'s own.
if ((only === 'variants' || only === 'nearmiss') && variantSets) {
  if (only === 'variants') reportMining(variantSets.prose, variantSets.held, out)
  await chooseAgainstProse(
    kept,
    variantSets.commands,
    [...variantSets.wakes, ...variantSets.prose],
    variantSets.held,
    SETTINGS,
    only === 'variants'
      ? (process.env.WAKE_COMPANION_VARIANT_WEIGHTS ?? '1,3,10').split(',').map(Number)
      : [10, 3],
    out,
    only === 'variants' ? 'fires' : 'nearmiss',
    fixtureWakes,
  )
}
if (only === 'choose') {
  // The reference (the built recipe) first: the rule compares every candidate with it.
  chooseCompanion(
    kept,
    more,
    [
      { name: 'built recipe', more: false, nearWeight: 1 },
      ...(process.env.WAKE_COMPANION_CHOOSE_WEIGHTS ?? '1,2,4')
        .split(',')
        .map((w) => ({ name: `+more, near ×${w}`, more: true, nearWeight: Number(w) })),
    ],
    SETTINGS,
    out,
  )
}
if (only === 'tune') {
  // WAKE_COMPANION_TUNE_WEIGHTS=1,4: the near-miss weights to train the split's models with.
  const weights = (process.env.WAKE_COMPANION_TUNE_WEIGHTS ?? '1,4').split(',').map(Number)
  const rows = weights.flatMap((nearWeight) =>
    tuneCompanion(kept, { ...SETTINGS, nearWeight }, out),
  )
  const c = chosen(rows, heldTotals(kept))
  out(
    c
      ? `chosen by the rule: weight ${c.nearWeight}, threshold ${c.threshold}, gate ${c.gate}`
      : 'no choice: the rule needs the built model (weight 1) among the weights',
  )
  const g = gateChosen(rows, columnTotals(kept))
  out(g ? `the gate alone, by its rule: ${g.gate}` : 'no gate choice: the built row is missing')
}
if (only === '' || only === 'train') {
  const set = [
    ...kept,
    ...more,
    ...(proseSets ? [...proseSets.commands, ...proseSets.prose] : []),
    ...(variantSets ? [...variantSets.commands, ...variantSets.wakes, ...variantSets.prose] : []),
  ]
  const base = labelled(set, SETTINGS)
  const { samples, hard } =
    proseSets || variantSets
      ? hardWeighted(set, base, SETTINGS.hardWeight)
      : { samples: base, hard: 0 }
  const positives = samples.filter((s) => s.label === 1).length
  out(`training: ${set.length} clips, ${samples.length} windows, ${positives} positive`)
  const t0 = process.cpuUsage()
  const m = trainCompanion(set, samples, SETTINGS, out)
  const used = process.cpuUsage(t0)
  out(`trained in ${((used.user + used.system) / 1e6).toFixed(0)} s of CPU`)
  // The near-miss weight is recorded only where it is not 1: the built file predates it.
  // So is the extra set, where it is in.
  const { nearWeight, more: withMore, prose, variants, hardWeight, ...settings } = SETTINGS
  const r = record(m, {
    voices: [...new Set(set.map((k) => k.voice))],
    clips: set.length,
    windows: samples.length,
    positives,
    ...settings,
    ...(nearWeight === 1 ? {} : { nearWeight }),
    ...(withMore ? { more: more.length } : {}),
    ...(prose ? { prose: proseSets?.prose.length, hard, hardWeight } : {}),
    ...(variants
      ? {
          variants: variantSets?.wakes.length,
          variantProse: variantSets?.prose.length,
          hard,
          hardWeight,
        }
      : {}),
  })
  // WAKE_COMPANION_WRITE=<path>: written there instead (a candidate trained while the shipped file
  // is still read, by the miner).
  const to = process.env.WAKE_COMPANION_WRITE ?? FILE
  writeFileSync(to, `${JSON.stringify(r)}\n`)
  out(`written: ${to}`)
}
if (only === '' || only === 'measure') {
  const { default: r } = await import('../src/adapters/openwakeword/hey-jarvis-companion.json', {
    with: { type: 'json' },
  })
  const built = companionOf(r as CompanionRecord)
  // WAKE_COMPANION_MEASURE_GATE=0.05: the built model asked from that gate against its own gate.
  const gate = process.env.WAKE_COMPANION_MEASURE_GATE
  // WAKE_COMPANION_MEASURE_BUILT=1: this file's model against the one built before companion4.
  if (process.env.WAKE_COMPANION_MEASURE_BUILT === '1')
    await measureCompanion(built, out, undefined, builtCompanion())
  else if (gate) await measureCompanion({ ...built, gate: Number(gate) }, out, undefined, built)
  else await measureCompanion(built, out)
}
