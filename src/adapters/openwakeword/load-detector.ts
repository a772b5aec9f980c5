import { DEFAULT_WAKE_BACKLOG_MS } from '../../core/defaults.js'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { WakeListener } from '../../ports/wake-word.js'
import type { CompanionModel } from './companion.js'
import { OpenWakeWordDetector, type ScoreListener, type WakeHead } from './detector.js'
import { EMBEDDING_SIZE, expectShape, FeaturePipeline, noisePrefill } from './features.js'
import type { InferenceRuntime, ModelSession } from './model-session.js'
import type { ThreadRuntime } from './model-thread.js'
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
  /**
   * Our companion head beside this phrase's pretrained head (companion.ts), if it has one; it may
   * still be coming (its weights read while the runtime's thread starts): the load waits for it
   * only once the models are loaded.
   */
  readonly companion?: CompanionModel | Promise<CompanionModel | undefined> | undefined
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
  /** Unscored audio kept while scoring catches up; DEFAULT_WAKE_BACKLOG_MS (3 s) if unset. */
  readonly backlogMs?: number
  /** Unscored audio kept during the detector's start (detector.ts); 10 s if unset. */
  readonly startBacklogMs?: number
  readonly now?: () => number
  /** Coarse scoring while every head is far below its threshold (detector.ts); 1 if unset. */
  readonly coarseHop?: number | undefined
  readonly onScores?: ScoreListener | undefined
  readonly onKeepingUp?: ((keepingUp: boolean) => void) | undefined
  /** Only while it says so does scoring rest for a late event loop (detector.ts); unset: always. */
  readonly sessionOpen?: (() => boolean) | undefined
  /** Told how the chain takes chunks (detector.ts): the microphone's idle bursts follow it. */
  readonly onBatch?: ((everyMs: number, nextMs: number) => void) | undefined
  /** Told once the runtime has been asked for every model (its thread started). */
  readonly onAsked?: (() => void) | undefined
}

/**
 * Ten seconds (320 KB of samples): inside 2.5 % of a core the start fell 3–7 s behind before it
 * caught up, and every chunk dropped in a ten-minute row was dropped then (bench/RESULTS.md, "the
 * drops' bursts").
 */
const DEFAULT_START_BACKLOG_MS = 10_000
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
  // Answered below, once the models are loaded; until then a failure is not an unhandled rejection.
  for (const p of o.phrases) if (p.companion instanceof Promise) p.companion.catch(() => {})
  const runtime = typeof o.runtime === 'string' ? await loadRuntime(o.runtime) : o.runtime
  // Every model is asked for at once: the runtime's thread loads them one after the other without
  // waiting for the event loop between them, which a start keeps busy (issue 47).
  const files = [o.melFile, o.embeddingFile, ...o.phrases.map((p) => p.file)]
  const loads = files.map((f) => runtime.load(f))
  o.onAsked?.()
  const settled = await Promise.allSettled(loads)
  const loaded = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  try {
    firstFailure(settled)
    const [mel, embedding, ...models] = loaded as [ModelSession, ModelSession, ...ModelSession[]]
    const windows = models.map(headWindow)
    const companions = await Promise.all(o.phrases.map((p) => p.companion))
    // The prefill reaches back as far as any window read after a reset: the longest head's, and
    // the chunks a coarse score leaves to be scored late.
    const reach = Math.max(...windows) + (o.coarseHop ?? 1)
    const heads: WakeHead[] = o.phrases.map((p, i) => {
      const model = models[i] as ModelSession
      const verifier =
        typeof p.verifier === 'string'
          ? readVerifier(p.verifier, p.file, windows[i] ?? 0)
          : p.verifier
      const companion = companions[i]
      checkCompanion(p, companion, windows[i] ?? 0)
      return { phrase: p.phrase, model, threshold: p.threshold, verifier, companion }
    })
    // On the runtime's thread the whole chain lives there, its prefill made with it: a scored
    // chunk is one hand-off (chain.ts). A runtime of the caller's (a test's) scores in process.
    const { consecutive, refractoryMs, coarseHop } = o
    // The heads are checked first: the runtime's thread runs each model synchronously, so a check
    // asked after the chain would wait there for the rest of its prefill, and the start with it.
    const headsChecked = models.map(checkHeadScore)
    const making = onThread(runtime)
      ? runtime.chain({ mel, embedding, heads, reach, consecutive, refractoryMs, coarseHop })
      : runtime.prefill
        ? runtime.prefill(mel, embedding, reach)
        : noisePrefill(mel, embedding, reach)
    // Settled, not raced: no model is closed while a run on it is still under way.
    const checked = await Promise.allSettled([making, ...headsChecked])
    const first = checked[0]
    const made = first?.status === 'fulfilled' ? first.value : undefined
    if (checked.some((r) => r.status === 'rejected') && made && !(made instanceof Float32Array)) {
      await made.close()
    }
    firstFailure(checked)
    const scoring =
      made instanceof Float32Array
        ? { features: FeaturePipeline.create(mel, embedding, made) }
        : { chain: made }
    o.logger.info(
      {
        runtime: runtime.name,
        embedding: embedding.streamed ? 'streamed' : 'whole',
        phrases: heads.map((h) => h.phrase),
        verified: heads.filter((h) => h.verifier).map((h) => h.phrase),
      },
      'wake word detector ready',
    )
    runtime.background?.()
    const loadWork = streamLater(embedding, o.logger)
    return new OpenWakeWordDetector({
      onWake: o.onWake,
      runtime: runtime.name,
      ...scoring,
      heads,
      consecutive: o.consecutive,
      refractoryMs: o.refractoryMs,
      backlogMs: o.backlogMs ?? DEFAULT_WAKE_BACKLOG_MS,
      startBacklogMs: o.startBacklogMs ?? DEFAULT_START_BACKLOG_MS,
      coarseHop: o.coarseHop,
      onKeepingUp: o.onKeepingUp,
      sessionOpen: o.sessionOpen,
      onBatch: o.onBatch,
      logger: o.logger,
      now: o.now ?? Date.now,
      onScores: o.onScores,
      owned: [mel, embedding],
      loadWork,
    })
  } catch (err) {
    for (const m of loaded) await m.close().catch(() => {})
    throw err
  }
}

/**
 * The embedding model listens as its three parts run whole over each window and switches to their
 * streamed run once that is checked (streaming-embedding.ts): the check's CPU comes after the ready
 * line, on the runtime's thread once it runs below the event loop (`background`). The scores are
 * the same either way. Resolves once the check has settled, whichever way.
 */
function streamLater(embedding: ModelSession, logger: Logger): Promise<void> | undefined {
  if (!embedding.stream || embedding.streamed) return undefined
  return embedding.stream().then(
    (mode) => {
      if (mode === 'streamed') logger.info({ embedding: mode }, 'wake word embedding streamed')
      if (mode === 'whole') {
        logger.info(
          { embedding: mode },
          'wake word embedding kept whole: its streamed run did not match its parts run whole',
        )
      }
    },
    (err: unknown) =>
      logger.warn(
        { event: 'wake_embedding_whole', embedding: 'whole', err: errorText(err) },
        'wake word embedding kept whole: its streamed run could not be made',
      ),
  )
}

function onThread(runtime: InferenceRuntime): runtime is ThreadRuntime {
  return typeof (runtime as Partial<ThreadRuntime>).chain === 'function'
}

/** Throws the first failure among `results`, in their order (the files' order: mel first). */
function firstFailure(results: readonly PromiseSettledResult<unknown>[]): void {
  const failed = results.find((r) => r.status === 'rejected')
  if (failed) throw failed.reason
}

/** A head takes `[1, n, 96]` embeddings (n its window, 1 to 120); returns `n`. */
function headWindow(model: ModelSession): number {
  expectShape(model, [1, null, EMBEDDING_SIZE], 'a wake-word head')
  const n = model.inputShape[1]
  const window = typeof n === 'number' ? n : 16
  if (window < 1 || window > MAX_HEAD_WINDOW) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `${model.file} wants ${window} embeddings; openWakeWord heads take 1 to ${MAX_HEAD_WINDOW}: use an openWakeWord .onnx head`,
    )
  }
  return window
}

/** A head gives one score: a multi-class model (such as timer_v0.1) is refused. */
async function checkHeadScore(model: ModelSession): Promise<void> {
  const window = headWindow(model)
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
}

/** A companion reads the head's window: one made for another window is refused. */
function checkCompanion(
  p: WakePhraseFile,
  companion: CompanionModel | undefined,
  window: number,
): void {
  if (companion && companion.window !== window) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `${p.file} reads ${window} embeddings but the companion head of "${p.phrase}" reads ${companion.window}: turn it off (listen.wake.models[].companion: false) for this head`,
    )
  }
}
