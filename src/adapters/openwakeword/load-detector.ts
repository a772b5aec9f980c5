import { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { WakeListener } from '../../ports/wake-word.js'
import { OpenWakeWordDetector, type ScoreListener, type WakeHead } from './detector.js'
import { EMBEDDING_SIZE, expectShape, FeaturePipeline } from './features.js'
import type { InferenceRuntime, ModelSession } from './model-session.js'
import { loadRuntime, type RuntimeChoice } from './runtime.js'
import { readVerifier, type VerifierStage } from './verifier.js'

/** One wake phrase to listen for: its head file and threshold. */
export interface WakePhraseFile {
  readonly phrase: string
  readonly file: string
  readonly threshold: number
  /**
   * The household's verifier for this phrase: its file (`nocturn wake enroll`), or a stage of the
   * caller's (enrolment records the windows through one).
   */
  readonly verifier?: string | VerifierStage | undefined
}

export interface LoadWakeDetectorOptions {
  readonly onWake: WakeListener
  readonly phrases: readonly WakePhraseFile[]
  /** The two feature models every head shares. */
  readonly melFile: string
  readonly embeddingFile: string
  /** A choice (auto, native, wasm), or a runtime of the caller's (a test's slow one). */
  readonly runtime: RuntimeChoice | InferenceRuntime
  readonly consecutive: number
  readonly refractoryMs: number
  readonly logger: Logger
  /** Unscored audio kept while scoring catches up; 2 s if unset. */
  readonly backlogMs?: number
  readonly now?: () => number
  /** Coarse scoring while every head is far below its threshold (detector.ts); 1 if unset. */
  readonly coarseHop?: number | undefined
  readonly onScores?: ScoreListener | undefined
  readonly onKeepingUp?: ((keepingUp: boolean) => void) | undefined
}

/** Two seconds: longer than any scoring stall a healthy board has (17 s is a cold WASM start). */
const DEFAULT_BACKLOG_MS = 2000
/** The longest head window upstream trains (the feature buffer keeps 120 embeddings). */
const MAX_HEAD_WINDOW = 120

/**
 * Loads the runtime and every model, checks each one's shape, and returns a running detector.
 * Throws a NocturnError naming the file and the fix when a model is missing, not an ONNX model,
 * or made for another pipeline.
 */
export async function loadWakeDetector(o: LoadWakeDetectorOptions): Promise<OpenWakeWordDetector> {
  if (o.phrases.length === 0) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_MISSING',
      'no wake model configured: add one to listen.wake.models',
    )
  }
  const runtime = typeof o.runtime === 'string' ? await loadRuntime(o.runtime) : o.runtime
  const loaded: ModelSession[] = []
  const load = async (file: string) => {
    const m = await runtime.load(file)
    loaded.push(m)
    return m
  }
  try {
    const mel = await load(o.melFile)
    const embedding = await load(o.embeddingFile)
    const features = await FeaturePipeline.create(mel, embedding)
    const heads: WakeHead[] = []
    for (const p of o.phrases) {
      const model = await load(p.file)
      const window = await checkHead(model)
      const verifier =
        typeof p.verifier === 'string' ? readVerifier(p.verifier, p.file, window) : p.verifier
      heads.push({ phrase: p.phrase, model, threshold: p.threshold, verifier })
    }
    o.logger.info(
      {
        runtime: runtime.name,
        phrases: heads.map((h) => h.phrase),
        verified: heads.filter((h) => h.verifier).map((h) => h.phrase),
      },
      'wake word detector ready',
    )
    runtime.background?.()
    return new OpenWakeWordDetector({
      onWake: o.onWake,
      runtime: runtime.name,
      features,
      heads,
      consecutive: o.consecutive,
      refractoryMs: o.refractoryMs,
      backlogMs: o.backlogMs ?? DEFAULT_BACKLOG_MS,
      coarseHop: o.coarseHop,
      onKeepingUp: o.onKeepingUp,
      logger: o.logger,
      now: o.now ?? Date.now,
      onScores: o.onScores,
      owned: [mel, embedding],
    })
  } catch (err) {
    for (const m of loaded) await m.close().catch(() => {})
    throw err
  }
}

/** A head takes `[1, n, 96]` embeddings and gives one score; resolves with its window `n`. */
async function checkHead(model: ModelSession): Promise<number> {
  expectShape(model, [1, null, EMBEDDING_SIZE], 'a wake-word head')
  const n = model.inputShape[1]
  const window = typeof n === 'number' ? n : 16
  if (window < 1 || window > MAX_HEAD_WINDOW) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `${model.file} wants ${window} embeddings; openWakeWord heads take 1 to ${MAX_HEAD_WINDOW}: use an openWakeWord .onnx head`,
    )
  }
  const out = await model.run(new Float32Array(window * EMBEDDING_SIZE), [
    1,
    window,
    EMBEDDING_SIZE,
  ])
  if (out.length !== 1) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `${model.file} gives ${out.length} scores, not one: it is a multi-class model (such as timer_v0.1), not a wake phrase; use a single-phrase head`,
    )
  }
  return window
}
