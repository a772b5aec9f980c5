// The long ordinary-speech stream of wake-ordinary.bench.ts: what its shards share.
import { join } from 'node:path'
import { companionFor } from '../../src/adapters/openwakeword/companions.js'
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import { loadWakeDetector } from '../../src/adapters/openwakeword/load-detector.js'
import { type WakeConfig, wakeSchema } from '../../src/app/config/wake-schema.js'
import {
  COARSE_HOP,
  createWakeDetector,
  thresholdAt,
  usedVerifier,
  type WakeDetectorOptions,
  wakeModelPaths,
} from '../../src/app/wake-detector.js'
import { DEFAULT_SENSITIVITY } from '../../src/device/device-state.js'
import { MODEL_DIR } from '../../test/helpers/wake.js'
import { builtCompanion, RESERVED } from './companion-prose.js'
import { fortuneTexts } from './prose.js'

export const ORDINARY_DIR = join(import.meta.dirname, '..', '..', 'var', 'bench-wake', 'ordinary')

/**
 * The detectors scored on the same audio: the default install, and it without the companion; with
 * WAKE_ORDINARY_GATE, also the default install with the companion asked from that gate (issue 46);
 * with WAKE_ORDINARY_BUILT=1, also with the companion built before branch `companion4`.
 */
export const DETECTORS: readonly {
  label: string
  companion: boolean
  gate?: number
  built?: boolean
}[] = [
  { label: 'pretrained alone', companion: false },
  { label: 'with the companion', companion: true },
  ...(process.env.WAKE_ORDINARY_BUILT === '1'
    ? [{ label: 'with the companion built before', companion: true, built: true }]
    : []),
  ...(process.env.WAKE_ORDINARY_GATE ?? '')
    .split(',')
    .filter((g) => g !== '')
    .map((g) => ({ label: `with the companion, gate ${g}`, companion: true, gate: Number(g) })),
]

/**
 * A detector of DETECTORS: `createWakeDetector` on the default install, or, for another gate, the
 * same steps with the companion's gate replaced (createWakeDetector has no way in for it).
 */
export async function ordinaryDetector(
  d: (typeof DETECTORS)[number],
  options: Pick<WakeDetectorOptions, 'onWake' | 'logger' | 'onScores' | 'coarseHop'>,
): Promise<OpenWakeWordDetector> {
  const config = serviceWake(d.companion)
  if (d.gate === undefined && !d.built) return createWakeDetector(config, options)
  const paths = wakeModelPaths(config)
  return loadWakeDetector({
    ...paths,
    phrases: paths.phrases.map((p, i) => {
      const c = p.companion ? (d.built ? builtCompanion() : companionFor(p.companion)) : undefined
      return {
        ...p,
        threshold: thresholdAt(p.threshold, DEFAULT_SENSITIVITY, p.verified),
        verifier: usedVerifier(config.models[i]?.verifier, p.verifier),
        companion: c && { ...c, gate: d.gate ?? c.gate },
      }
    }),
    onWake: options.onWake,
    runtime: config.runtime,
    consecutive: config.consecutive,
    refractoryMs: config.refractoryMs,
    coarseHop: options.coarseHop ?? COARSE_HOP,
    logger: options.logger,
    onScores: options.onScores,
  })
}

/** The default install's `listen.wake` on the pinned models, the companion on or off. */
function serviceWake(companion: boolean): WakeConfig {
  return wakeSchema.parse({
    models: [{ model: 'hey_jarvis', ...(companion ? {} : { companion: false }) }],
    modelDir: MODEL_DIR,
  })
}

/**
 * companion-data.ts's fortunes: its prose negatives read from text 3000 of the 5000 after it
 * (FORTUNE_FROM), its training babble 2000 further on (80 texts); and companion-prose.ts's
 * reserved range (5300–8190: its training prose and its held-out stream). None of them is read
 * here. The reserved range lies past the texts a 5 h run reads (0–~2850), so that run's audio is
 * what it was before it; ~5.6 h are left in all.
 */
const COMPANION_FORTUNES = [[3000, 5080], RESERVED] as const

/** The fortunes the companion never heard, by key; the collections taking turns, as prose.ts's. */
export function ordinaryTexts(): { key: string; text: string }[] {
  const all = fortuneTexts()
  const trained = new Set(COMPANION_FORTUNES.flatMap((r) => all.slice(...r).map((t) => t.key)))
  return all.filter((t) => !trained.has(t.key))
}

/** One text as read in a shard's stream, in ms of that shard's capture time. */
export interface Uttered {
  readonly fromMs: number
  readonly toMs: number
  /** Where the next text starts (the gap after this one ends). */
  readonly nextMs: number
  readonly key: string
  readonly text: string
  readonly voice: string
}

/** One detector's fire, as the shard heard it. */
export interface Fire {
  readonly detector: string
  readonly atS: number
  readonly score: number
  /** The highest aligned score each detector gave within 400 ms of the fire. */
  readonly headScore: number
  readonly withCompanionScore: number
  readonly voice: string
  readonly key: string
  readonly text: string
  /** When the fire fell in the gap after `text`: the text that came next. */
  readonly nextText?: string | undefined
  readonly inSpeech: boolean
  /** Speech in the 1.5 s before the fire (the wake stage asks for 200 ms of voice there). */
  readonly voicedMs: number
  /** Under the quiet room noise. */
  readonly noisy: boolean
  /** The local check (pocketsphinx at 1e-12) agreed on the 2 s pre-roll: audio sent with it on. */
  readonly sent: boolean
}

export interface ShardResult {
  readonly shard: number
  readonly done: boolean
  readonly hours: number
  readonly noisyHours: number
  readonly texts: number
  readonly failed: number
  readonly synthMs: number
  readonly scoreMs: number
  readonly cpuMs: number
  readonly wallMs: number
  /** Stream hours (each text and the gap after it) by engine. */
  readonly speechByEngine: Record<string, number>
  readonly fires: Fire[]
}
