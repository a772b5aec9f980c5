import { existsSync } from 'node:fs'
import { basename, join } from 'node:path'
import type { OpenWakeWordDetector, ScoreListener } from '../adapters/openwakeword/detector.js'
import type { WakePhraseFile } from '../adapters/openwakeword/load-detector.js'
import { EMBEDDING_FILE, MEL_FILE, pretrained } from '../adapters/openwakeword/model-files.js'
import { verifierFileFor } from '../adapters/openwakeword/verifier.js'
import { NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { WakeListener } from '../ports/wake-word.js'
import type { WakeConfig } from './config/wake-schema.js'

/** The configured phrases and the two feature models, as files. */
export interface WakeModelPaths {
  /** Each with the verifier file it would use (whether or not that file exists yet). */
  readonly phrases: readonly (WakePhraseFile & { readonly verifier: string | undefined })[]
  readonly melFile: string
  readonly embeddingFile: string
}

/**
 * Where each configured model is: a pretrained name is its file in `modelDir` (put there by
 * `nocturn wake install`), a path is itself; the feature models are always in `modelDir`.
 */
export function wakeModelPaths(config: WakeConfig): WakeModelPaths {
  const phrases = config.models.map((m) => {
    const threshold = m.threshold ?? config.threshold
    const verifier = (file: string) =>
      m.verifier === false ? undefined : (m.verifier ?? verifierFileFor(config.modelDir, file))
    if (m.model.startsWith('/')) {
      return {
        phrase: m.phrase ?? phraseOfFile(m.model),
        file: m.model,
        threshold,
        verifier: verifier(m.model),
      }
    }
    const head = pretrained(m.model)
    if (!head) {
      throw new NocturnError(
        'NOC_ERR_WAKE_MODEL_MISSING',
        `listen.wake.models: "${m.model}" is not a pretrained model (nocturn wake list names them); for your own, give the .onnx file's absolute path`,
      )
    }
    const file = join(config.modelDir, head.file)
    return { phrase: m.phrase ?? head.phrase, file, threshold, verifier: verifier(file) }
  })
  return {
    phrases,
    melFile: join(config.modelDir, MEL_FILE),
    embeddingFile: join(config.modelDir, EMBEDDING_FILE),
  }
}

/** "hey_nocturn_v0.2.onnx" → "hey nocturn". */
function phraseOfFile(file: string): string {
  return basename(file)
    .replace(/\.onnx$/, '')
    .replace(/_v\d+(\.\d+)*$/, '')
    .replace(/_/g, ' ')
}

export interface WakeDetectorOptions {
  readonly onWake: WakeListener
  readonly logger: Logger
  readonly onScores?: ScoreListener
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
  const paths = wakeModelPaths(config)
  const { loadWakeDetector } = await import('../adapters/openwakeword/load-detector.js')
  return loadWakeDetector({
    ...paths,
    phrases: paths.phrases.map((p, i) => ({
      ...p,
      verifier: usedVerifier(config.models[i]?.verifier, p.verifier),
    })),
    onWake: options.onWake,
    runtime: config.runtime,
    consecutive: config.consecutive,
    refractoryMs: config.refractoryMs,
    logger: options.logger,
    onScores: options.onScores,
  })
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
