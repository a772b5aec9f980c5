// Prose for the companion head (issue 46, branch `companion4`): the built companion woke on plain
// words of ordinary speech ("each other", "Majesty", "garbage", "I know where") 2.4 times an hour,
// having trained on 8 fortunes per tuning voice. Here, from the TUNING voices only (trainVoices),
// fortunes of a key range reserved for this (RESERVED; ordinary.ts leaves all of it out, so its
// stream stays unheard):
//   - training prose: texts TRAIN_PROSE, ten at a time run on as one clip (0.3–1 s between texts)
//     by one voice-speed, the voice-speeds taking turns;
//   - a held-out prose stream: texts HELD_PROSE (never trained on), the same way, for the rule;
//   - hard negatives: the training-prose windows where the BUILT companion (the shipped file, its
//     SHA-256 checked against the one this work started from, so the mining is the same every
//     time) with the head scores ≥ 0.3 — it fires or nearly fires there — weighted more in training.
// Cached under var/bench-wake/companion/prose-*.{bin,json}. Seeded; the holdout is never read.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type CompanionModel, companionScore } from '../../src/adapters/openwakeword/companion.js'
import { type CompanionRecord, companionOf } from '../../src/adapters/openwakeword/companions.js'
import { EMBEDDING_SIZE } from '../../src/adapters/openwakeword/features.js'
import {
  COMPANION_CACHE,
  embedder,
  type Kept,
  readKept,
  said,
  seeded,
  type TrainVoice,
  trainVoices,
  writeKept,
} from './companion-data.js'
import type { Labelled } from './companion-train.js'
import { concat } from './corpus.js'
import { fortuneTexts } from './prose.js'

const RATE = 16_000
const WINDOW = 16
const WARMUP = 5
/** Fortunes kept for the companion's prose, by index in prose.ts's list: ordinary.ts skips them. */
export const RESERVED = [5300, 8191] as const
const TRAIN_PROSE = [5300, 6300] as const
const HELD_PROSE = [7800, 8191] as const
/** The chain's score from which a training-prose window counts as a hard negative. */
export const HARD_FROM = 0.3

/**
 * The shipped companion this work started from, by its file's SHA-256: the shipped file, or with
 * a candidate in its place, WAKE_COMPANION_BUILT_FILE (a copy of it, e.g. from `git show`).
 */
const BUILT_FILE =
  process.env.WAKE_COMPANION_BUILT_FILE ??
  join(
    import.meta.dirname,
    '..',
    '..',
    'src',
    'adapters',
    'openwakeword',
    'hey-jarvis-companion.json',
  )
const BUILT_SHA256 = '37fabe6bd6c3a052358c0e2d692b62de260a9ff9c1946412c48bd5e265543550'

/** The built companion (the one shipped before this work): the hard negatives are mined with it. */
export function builtCompanion(): CompanionModel {
  const bytes = readFileSync(BUILT_FILE)
  const sha = createHash('sha256').update(bytes).digest('hex')
  if (sha !== BUILT_SHA256) {
    throw new Error(
      `${BUILT_FILE} is not the companion these figures were mined with (SHA-256 ${BUILT_SHA256.slice(0, 8)}…): re-make it from git history to repeat them`,
    )
  }
  return companionOf(JSON.parse(bytes.toString('utf8')) as CompanionRecord)
}

/** Texts `range`, ten a clip, by `vs` taking turns (tuning voices unless given). */
export async function proseClips(
  name: string,
  range: readonly [number, number],
  seed: number,
  log: (s: string) => void,
  vs: readonly TrainVoice[] = trainVoices(),
): Promise<Kept[]> {
  const file = join(COMPANION_CACHE, `prose-${name}.bin`)
  const meta = join(COMPANION_CACHE, `prose-${name}.json`)
  if (existsSync(file) && existsSync(meta)) return readKept(file, meta)
  const rnd = seeded(seed)
  const texts = fortuneTexts().slice(...range)
  const e = await embedder()
  const kept: Kept[] = []
  for (let from = 0, clip = 0; from < texts.length; from += 10, clip++) {
    const v = vs[(clip * 7) % vs.length] as (typeof vs)[number]
    const parts: Int16Array[] = [new Int16Array(RATE / 2)]
    for (const t of texts.slice(from, from + 10)) {
      try {
        parts.push(said(v, t.text), new Int16Array(Math.round(RATE * (0.3 + rnd() * 0.7))))
      } catch {
        // festival crashes on a few texts: left out.
      }
    }
    const r = await e.run(concat(parts))
    kept.push({ group: 'prose', voice: `${v.name}@${v.speed}`, noise: 'clean', ...r })
    if (clip % 20 === 0) log(`  prose ${name}: ${kept.length} clips`)
  }
  await e.close()
  writeKept(kept, file, meta)
  return kept
}

/** The training prose (tuning voices, TRAIN_PROSE). */
export const trainingProse = (log: (s: string) => void) =>
  proseClips('train', TRAIN_PROSE, 4605, log)
/** The held-out prose stream (tuning voices, HELD_PROSE): for the rule only. */
export const heldProse = (log: (s: string) => void) => proseClips('held', HELD_PROSE, 4606, log)

/** The chain's score of chunk `c` of clip `k`: the head's, or the companion's where the head reaches its gate. */
function chainScore(m: CompanionModel, k: Kept, c: number): number {
  const h = k.head[c] ?? 0
  if (h < m.gate) return h
  const w = k.embeddings.subarray(c * EMBEDDING_SIZE, (c + WINDOW) * EMBEDDING_SIZE)
  return Math.max(h, companionScore(m, w))
}

/** `samples` with every prose window the built companion scores ≥ HARD_FROM weighted `weight`. */
export function hardWeighted(
  kept: readonly Kept[],
  samples: readonly Labelled[],
  weight: number,
): { samples: Labelled[]; hard: number } {
  const m = builtCompanion()
  let hard = 0
  const out = samples.map((s) => {
    const k = kept[s.clip] as Kept
    if (k.group !== 'prose' || chainScore(m, k, s.chunk) < HARD_FROM) return s
    hard++
    return { ...s, weight }
  })
  return { samples: out, hard }
}

/**
 * Fires in a stream clip (two chunks in a row at or over, then 2 s of refractory time); with
 * `near`, near-fires: single chunks where the chain's score (the companion's folded as the shipped
 * file folds it, threshold `t` → 0.5) reaches `near`, then 2 s.
 */
export function streamFires(
  head: number[],
  p: Float64Array,
  t: number,
  gate: number,
  near?: number,
): number {
  const logit = (x: number) => Math.log(x / (1 - x))
  const at = near === undefined ? undefined : logit(near)
  let run = 0
  let n = 0
  for (let c = WARMUP; c < p.length; c++) {
    const h = head[c] ?? 0
    const q = Math.min(1 - 1e-12, Math.max(1e-12, p[c] ?? 0))
    const hit =
      at === undefined
        ? h >= 0.5 || (h >= gate && q >= t)
        : h >= (near ?? 1) || (h >= gate && logit(q) - logit(t) >= at)
    run = hit ? run + 1 : 0
    if (run < (at === undefined ? 2 : 1)) continue
    n++
    run = 0
    c += 25
  }
  return n
}

/** The stream's length in hours (each chunk 80 ms). */
export const proseHours = (ks: readonly Kept[]) =>
  ks.reduce((n, k) => n + k.embeddings.length / EMBEDDING_SIZE, 0) * (0.08 / 3600)
