import { existsSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { OpenWakeWordDetector, ScoreListener } from '../adapters/openwakeword/detector.js'
import type { WakePhraseFile } from '../adapters/openwakeword/load-detector.js'
import {
  EMBEDDING_FILE,
  MEL_FILE,
  pretrained,
  verifierFileFor,
} from '../adapters/openwakeword/model-files.js'
import { NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { DEFAULT_SENSITIVITY, type DeviceState } from '../device/device-state.js'
import type { WakeTeacher } from '../ports/wake-teacher.js'
import type { WakeListener, WakeWordDetector } from '../ports/wake-word.js'
import type { Sensitivity } from '../protocol/sensitivity.js'
import { DEFAULT_WAKE_MODEL_DIR, type WakeConfig } from './config/wake-schema.js'
import { guardNativeRuntime } from './native-guard.js'

/**
 * A configured phrase: its companion head is named (the pretrained head it would stand beside),
 * not loaded — the weights are read with the runtime, never in speech mode (test/app/lazy-loading).
 */
type ConfiguredPhrase = Omit<WakePhraseFile, 'companion'> & {
  readonly companion?: string | undefined
}

/** The configured phrases and the two feature models, as files. */
export interface WakeModelPaths {
  /**
   * Each with the verifier file it would use (whether or not that file exists yet), and whether
   * that file is there: a verified phrase's scores are the verifier's, and its sensitivity moves
   * from its own measured points.
   */
  readonly phrases: readonly (ConfiguredPhrase & {
    readonly verifier: string | undefined
    readonly verified: boolean
  })[]
  readonly melFile: string
  readonly embeddingFile: string
}

/**
 * Where each configured model is: a pretrained name is its file in `modelDir` (put there by
 * `nocturn wake install`), a path is itself; the feature models are always in `modelDir`.
 */
export function wakeModelPaths(config: WakeConfig): WakeModelPaths {
  const phrases = config.models.map((m) => {
    const verifier = (file: string) =>
      m.verifier === false ? undefined : (m.verifier ?? verifierFileFor(config.modelDir, file))
    // A phrase's own threshold, else the verified one where its verifier is there to be used.
    const scoring = (file: string) => {
      const v = verifier(file)
      const verified = v !== undefined && existsSync(v)
      const threshold = m.threshold ?? (verified ? config.verifiedThreshold : config.threshold)
      return { threshold, verifier: v, verified }
    }
    if (m.model.startsWith('/')) {
      return { phrase: m.phrase ?? phraseOfFile(m.model), file: m.model, ...scoring(m.model) }
    }
    const head = pretrained(m.model)
    if (!head) {
      throw new NocturnError(
        'NOC_ERR_WAKE_MODEL_MISSING',
        `listen.wake.models: "${m.model}" is not a pretrained model (nocturn wake list names them); for your own, give the .onnx file's absolute path`,
      )
    }
    const file = join(config.modelDir, head.file)
    // Our companion head stands beside the pretrained one that has one, unless turned off.
    const companion = m.companion === false ? undefined : m.model
    return { phrase: m.phrase ?? head.phrase, file, ...scoring(file), companion }
  })
  return {
    phrases,
    melFile: join(config.modelDir, MEL_FILE),
    embeddingFile: join(config.modelDir, EMBEDDING_FILE),
  }
}

/** The configured model files that are not there; throws NocturnError for an unknown pretrained name. */
export function missingWakeFiles(config: WakeConfig): string[] {
  const paths = wakeModelPaths(config)
  const files = [paths.melFile, paths.embeddingFile, ...paths.phrases.map((p) => p.file)]
  return files.filter((f) => !existsSync(f))
}

/** How to put the missing files in place (doctor's and config --check's fix). */
export function wakeInstallFix(config: WakeConfig): string {
  const dir = config.modelDir === DEFAULT_WAKE_MODEL_DIR ? '' : ` --dir ${config.modelDir}`
  return `sudo nocturn wake install <name> (nocturn wake list names them)${dir}, or correct the path in listen.wake.models`
}

/**
 * `low` moves a phrase's threshold this share of the way from it to 1: 0.5 → 0.9, where the full
 * run measured about a third of the false wakes of 0.5 (bench/RESULTS.md; docs/wake-word.md,
 * "Sensitivity").
 */
const LOW_TOWARDS_ONE = 0.8
/**
 * A verified phrase's `low` goes a third of the way: 0.7 → 0.8, where the households' verifiers
 * woke a fifth as often as at 0.7 and still missed 2 of 48 clean phrases; 0.8 of the way (0.94)
 * woke none and missed 22 of 48 (bench/RESULTS.md, "the sensitivity from the verified threshold").
 */
const VERIFIED_LOW_TOWARDS_ONE = 1 / 3
/** `high` scales a phrase's threshold by this: 0.5 → 0.3. */
const HIGH_FACTOR = 0.6

/**
 * The threshold a phrase configured at `base` gets at `sensitivity`: `normal` is the configured
 * one, so a household's own per-phrase calibration stays the middle of the three.
 */
export function thresholdAt(base: number, sensitivity: Sensitivity, verified = false): number {
  if (sensitivity === 'low') {
    return base + (1 - base) * (verified ? VERIFIED_LOW_TOWARDS_ONE : LOW_TOWARDS_ONE)
  }
  if (sensitivity === 'high') return base * HIGH_FACTOR
  return base
}

/** Each phrase's threshold at `sensitivity`, in the order of the detector's phrases. */
export function wakeThresholds(
  phrases: WakeModelPaths['phrases'],
  sensitivity: Sensitivity,
): number[] {
  return phrases.map((p) => thresholdAt(p.threshold, sensitivity, p.verified))
}

/**
 * The detector follows the device's sensitivity: each change (Home Assistant's select) moves every
 * phrase's threshold at once, through the port — the models stay loaded, the audio keeps flowing.
 * Returns the unsubscribe function.
 */
export function followSensitivity(
  device: DeviceState,
  detector: Pick<WakeWordDetector, 'setThresholds'>,
  config: WakeConfig,
  logger: Logger,
): () => void {
  // Resolved once, beside the detector: a verifier enrolled while it runs is loaded at the next
  // start, and until then the phrase keeps the thresholds of a phrase without one.
  const phrases = wakeModelPaths(config).phrases
  return device.subscribe((s, change) => {
    if (change.kind !== 'sensitivity') return
    const thresholds = wakeThresholds(phrases, s.sensitivity)
    detector.setThresholds(thresholds)
    logger.info({ sensitivity: s.sensitivity, thresholds }, 'wake thresholds changed')
  })
}

/** "hey_nocturn_v0.2.onnx" → "hey nocturn". */
function phraseOfFile(file: string): string {
  return basename(file)
    .replace(/\.onnx$/, '')
    .replace(/_v\d+(\.\d+)*$/, '')
    .replace(/_/g, ' ')
}

/**
 * The service scores coarsely while every phrase is far below its threshold: one embedding every
 * 2 chunks (160 ms), exactly again as a score rises (docs/wake-word.md, "A talking room").
 */
export const COARSE_HOP = 2

/** What to do about a wake word that cannot keep up on a board. */
export const CANNOT_KEEP_UP_FIX =
  'listen for fewer phrases (listen.wake.models), use listen.mode "button", or use a faster board'
/** What the status and the LED's error say when scoring cannot keep up, with the fix. */
export const WAKE_CANNOT_KEEP_UP = `the wake word cannot keep up on this board and misses some of what is said: ${CANNOT_KEEP_UP_FIX}`

export interface WakeDetectorOptions {
  readonly onWake: WakeListener
  readonly logger: Logger
  readonly onScores?: ScoreListener
  /** The device's sensitivity at start (DEFAULT_SENSITIVITY: the configured thresholds). */
  readonly sensitivity?: Sensitivity
  /**
   * Where the native runtime's first use leaves its mark (app/native-guard.ts): a start that
   * finds it, because the last one crashed there, listens through WASM. Unset: no guard (doctor,
   * the tests, enrolment: one-off processes whose crash a person sees).
   */
  readonly nativeMark?: string
  /** Told when the detector starts dropping audio (false) and when it keeps up again (true). */
  readonly onKeepingUp?: (keepingUp: boolean) => void
  /**
   * Whether a session is under way: only then does scoring, behind, rest for the event loop
   * (docs/wake-word.md, "Never waiting on scoring"). Unset: always.
   */
  readonly sessionOpen?: () => boolean
  /** COARSE_HOP if unset; 1 scores every chunk exactly. */
  readonly coarseHop?: number
  /** Told how scoring takes its chunks, whenever that changes (the microphone's idle bursts). */
  readonly onBatch?: (everyMs: number, nextMs: number) => void
  /** Told once the runtime's thread has been asked for every model. */
  readonly onAsked?: () => void
  /**
   * The household teaches the detector (the wake log): given the teacher of its verifiers, which
   * keeps each wake's features and re-trains on the household's marks. `sensitivity` then says
   * the sensitivity now, for the threshold a taught verifier is checked against.
   */
  readonly teacher?: {
    readonly ready: (teacher: WakeTeacher) => void
    readonly sensitivity: () => Sensitivity
  }
}

/**
 * The wake-word detector for `listen.wake`: the runtime and the adapter are imported only here,
 * when a wake model is configured (test/app/lazy-loading.test.ts). Throws a NocturnError naming
 * the file and the fix when a model or the runtime cannot be used.
 */
export async function createWakeDetector(
  config: WakeConfig,
  options: WakeDetectorOptions,
): Promise<OpenWakeWordDetector> {
  const configured = wakeModelPaths(config)
  const sensitivity = options.sensitivity ?? DEFAULT_SENSITIVITY
  const paths = {
    ...configured,
    phrases: configured.phrases.map((p) => ({
      ...p,
      threshold: thresholdAt(p.threshold, sensitivity, p.verified),
    })),
  }
  const phrases = paths.phrases.map((p, i) => ({
    ...p,
    verifier: usedVerifier(config.models[i]?.verifier, p.verifier),
  }))
  // Before the native guard's mark: a verifier file refused here is no crash of the runtime.
  const taught = options.teacher && (await teachable(phrases, configured, options.teacher))
  const guard = options.nativeMark
    ? guardNativeRuntime(options.nativeMark, config.runtime, options.logger)
    : undefined
  const { loadWakeDetector } = await import('../adapters/openwakeword/load-detector.js')
  // The companions' weights (130 kB to parse, then decode) are read while the runtime's thread
  // starts: the load asks for the models first and waits for them only once those are loaded.
  const companions = import('../adapters/openwakeword/companions.js').then(({ companionFor }) =>
    phrases.map((p) => (p.companion ? companionFor(p.companion) : undefined)),
  )
  // Whatever the result, a load that returns or throws did not take the process down.
  const detector = await loadWakeDetector({
    ...paths,
    phrases: (taught ?? phrases).map((p, i) => ({ ...p, companion: companions.then((c) => c[i]) })),
    onWake: options.onWake,
    runtime: guard?.runtime ?? config.runtime,
    consecutive: config.consecutive,
    refractoryMs: config.refractoryMs,
    coarseHop: options.coarseHop ?? COARSE_HOP,
    onKeepingUp: options.onKeepingUp,
    sessionOpen: options.sessionOpen,
    onBatch: options.onBatch,
    onAsked: options.onAsked,
    logger: options.logger,
    onScores: options.onScores,
  }).finally(() => guard?.survived())
  return detector
}

/**
 * Each enrolled phrase's verifier as a stage the household can teach, and the teacher of them all
 * for the wake log. A phrase with no verifier has nothing to teach and keeps its head alone.
 */
async function teachable(
  phrases: readonly (ConfiguredPhrase & { verifier: string | undefined })[],
  configured: WakeModelPaths,
  o: NonNullable<WakeDetectorOptions['teacher']>,
): Promise<ConfiguredPhrase[]> {
  const { HouseholdStage, householdTeacher, readHouseholdVerifier } = await import(
    '../adapters/openwakeword/household-stage.js'
  )
  const stages = phrases.map((p) =>
    p.verifier === undefined
      ? undefined
      : new HouseholdStage({
          phrase: p.phrase,
          verifier: readHouseholdVerifier(p.verifier, p.file),
          file: p.verifier,
          headFile: p.file,
        }),
  )
  o.ready(
    householdTeacher(
      stages.filter((s) => s !== undefined),
      (phrase) => {
        const p = configured.phrases.find((x) => x.phrase === phrase)
        return p ? thresholdAt(p.threshold, o.sensitivity(), true) : 0.5
      },
    ),
  )
  return phrases.map((p, i) => ({ ...p, verifier: stages[i] ?? p.verifier }))
}

/**
 * The verifier file to load: one named in the config must be there (a missing one is an error
 * that names it); the default enrolment file is used only once `nocturn wake enroll` made it.
 */
export function usedVerifier(
  configured: string | false | undefined,
  file: string | undefined,
): string | undefined {
  if (file === undefined) return undefined
  if (configured === undefined && !existsSync(file)) return undefined
  if (!existsSync(file)) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_MISSING',
      `listen.wake.models: the verifier ${file} does not exist: enrol with \`nocturn wake enroll\`, or remove "verifier" from the config`,
    )
  }
  return file
}
