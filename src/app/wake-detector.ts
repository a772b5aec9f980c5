import { basename, join } from 'node:path'
import type { OpenWakeWordDetector, ScoreListener } from '../adapters/openwakeword/detector.js'
import type { WakePhraseFile } from '../adapters/openwakeword/load-detector.js'
import { EMBEDDING_FILE, MEL_FILE, pretrained } from '../adapters/openwakeword/model-files.js'
import { NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { WakeListener } from '../ports/wake-word.js'
import type { WakeConfig } from './config/wake-schema.js'

/** The configured phrases and the two feature models, as files. */
export interface WakeModelPaths {
  readonly phrases: readonly WakePhraseFile[]
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
    if (m.model.startsWith('/')) {
      return { phrase: m.phrase ?? phraseOfFile(m.model), file: m.model, threshold }
    }
    const head = pretrained(m.model)
    if (!head) {
      throw new NocturnError(
        'NOC_ERR_WAKE_MODEL_MISSING',
        `listen.wake.models: "${m.model}" is not a pretrained model (nocturn wake list names them); for your own, give the .onnx file's absolute path`,
      )
    }
    return { phrase: m.phrase ?? head.phrase, file: join(config.modelDir, head.file), threshold }
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
    onWake: options.onWake,
    runtime: config.runtime,
    consecutive: config.consecutive,
    refractoryMs: config.refractoryMs,
    logger: options.logger,
    onScores: options.onScores,
  })
}
