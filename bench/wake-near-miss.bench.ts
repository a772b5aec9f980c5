// The near-miss check (issue 46): a near-miss name that fires the pretrained head or its companion
// opens nothing. `nice -n 10 npm run bench -- wake-near-miss` (BENCH_ONLY=tune|train|measure for
// one part; it reads the companion bench's cache, var/bench-wake/companion, made first by
// `BENCH_ONLY=data npm run bench -- wake-companion`):
//   tune     L2 and threshold chosen by the rule in wake/near-miss-train.ts on a split of the
//            TUNING voices; the chosen pair is what `train` uses unless told otherwise;
//   train    the check on every tuning voice, written to var/bench-wake/near-miss (git-ignored:
//            measured, not built in — bench/RESULTS.md): the same data, the same file;
//   measure  on the HOLDOUT voices with the companion bench's measure (wake/companion-measure.ts):
//            the heads as built (pretrained + companion), without and with the check.
// Debian: espeak-ng flite festival festvox-kdlpc16k festvox-us-slt-hts sox fortunes pocketsphinx.
import { createHash } from 'node:crypto'
import { companionFor } from '../src/adapters/openwakeword/companions.js'
import { missingCommands } from '../test/helpers/system.js'
import { machineLine } from './machine.js'
import { companionData } from './wake/companion-data.js'
import { measureCompanion } from './wake/companion-measure.js'
import { readNearMiss, writeNearMiss } from './wake/near-miss-check.js'
import { heardScores, NEAR_MISS_GATE, trainNearMiss, tuneNearMiss } from './wake/near-miss-train.js'

if (missingCommands('espeak-ng', 'flite', 'text2wave', 'sox', 'pocketsphinx_continuous')) {
  process.exit(0)
}
const only = process.env.BENCH_ONLY ?? ''
const out = (s: string) => process.stdout.write(`${s}\n`)
/** Chosen by BENCH_ONLY=tune's rule (bench/RESULTS.md, "a near-miss check in embedding space"). */
const SETTINGS = {
  l2: Number(process.env.WAKE_NEAR_MISS_L2 ?? 0.01),
  threshold: Number(process.env.WAKE_NEAR_MISS_THRESHOLD ?? 0.02),
}

out(`# the near-miss check · ${machineLine()}`)
if (only !== 'measure') {
  const kept = await companionData(out)
  const t0 = process.cpuUsage()
  const heard = heardScores(kept)
  if (only === '' || only === 'tune') {
    const c = tuneNearMiss(kept, heard, out)
    out(
      c ? `chosen by the rule: L2 ${c.l2}, threshold ${c.threshold}` : 'no setting meets the rule',
    )
  }
  if (only === '' || only === 'train') {
    const { model, windows, positives } = trainNearMiss(kept, heard, SETTINGS.l2)
    const text = writeNearMiss(model, {
      gate: NEAR_MISS_GATE,
      threshold: SETTINGS.threshold,
      trained: { clips: kept.length, windows, positives, ...SETTINGS },
    })
    const sha = createHash('sha256').update(text).digest('hex').slice(0, 12)
    out(`written (${windows} windows, ${positives} positive; SHA-256 ${sha}…)`)
  }
  const used = process.cpuUsage(t0)
  out(`CPU: ${((used.user + used.system) / 1e6).toFixed(0)} s`)
}
if (only === '' || only === 'measure') {
  const companion = companionFor('hey_jarvis')
  if (!companion) throw new Error('hey_jarvis has no companion head')
  await measureCompanion(companion, out, readNearMiss())
}
