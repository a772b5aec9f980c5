import { NocturnError } from '../../core/errors.js'
import type { ModelSession } from './model-session.js'

/**
 * openWakeWord's shared front end, streamed one 80 ms chunk at a time exactly as its reference
 * (`openwakeword/utils.py`, AudioFeatures) does: a mel spectrogram of the newest samples, then one
 * speech embedding of the newest 76 mel frames. Every wake phrase's head reads the same
 * embeddings, so several phrases cost one front end.
 *
 * The mel spectrogram is cheap (≈ 5 % of a chunk's cost) and is made for every chunk; the
 * embedding is most of the cost and is made only when a head asks for it (`embed`). A quiet room
 * then costs the mel model alone, and the first chunk scored after it gets exactly the embeddings
 * it would have had: their mel frames were kept.
 */
export const SAMPLE_RATE_HZ = 16_000
/** One chunk: 80 ms, the step at which every score is made. */
export const CHUNK_SAMPLES = 1280
/** The mel model sees the chunk plus three 10 ms hops of context: 1760 samples → 8 frames. */
const MEL_CONTEXT_SAMPLES = 480
const MEL_BINS = 32
const EMBEDDING_WINDOW = 76
export const EMBEDDING_SIZE = 96
/** Enough embeddings for the longest head upstream trains (its buffer keeps ~10 s, 120). */
const EMBEDDING_KEEP = 120
/** Mel frames kept: enough to make any kept embedding late (a chunk adds at most 8 frames). */
const MEL_KEEP = EMBEDDING_WINDOW + 8 * (EMBEDDING_KEEP - 1)
/**
 * Phase `p` (0–3) of the embeddings ends `p` × 20 ms before the chunks' ends: 0 is the chunks'
 * own, the others are made only on asking (the detector's further phases near a threshold).
 */
export const PHASES = 4
const PHASE_SAMPLES = CHUNK_SAMPLES / PHASES
/**
 * Further phases' embeddings can be made for the newest this many chunks (a head's window, the run
 * of chunks and a coarse hop's late ones fit; `weather` needs 22 + 3).
 */
export const OFFSET_KEEP = 48
/** Chunks of mel frames one embedding reads (76 frames: 9.5 chunks). */
const EMBEDDING_CHUNKS = Math.ceil(EMBEDDING_WINDOW / 8)
/** Samples kept for the further phases' own mel runs: their oldest embedding's chunks and context. */
const HISTORY_SAMPLES = (OFFSET_KEEP + EMBEDDING_CHUNKS + 1) * CHUNK_SAMPLES + MEL_CONTEXT_SAMPLES
/** The embedding buffer starts from 4 s of random noise in ±1000, as upstream's does. */
const PREFILL_SAMPLES = 4 * SAMPLE_RATE_HZ
const PREFILL_AMPLITUDE = 1000
/** The noise is seeded, so every run scores the same. */
const PREFILL_SEED = 1
/**
 * The mel model ends by flooring every value at 80 below the largest of its run (a ReduceMax over
 * the run, then a Clip): a run of several chunks gives each chunk's own frames only where that
 * floor bound nothing. Asked for 1 less, so a rounding of the floor cannot matter.
 */
const MEL_RANGE = 79
/** Runs of several chunks also run chunk by chunk and compared, bit for bit, before they are trusted. */
const MEL_RUN_CHECKS = 4

export class FeaturePipeline {
  readonly #mel: ModelSession
  readonly #embedding: ModelSession
  /** The newest samples (up to chunk + context), as int16 values in float32. */
  readonly #raw = new Float32Array(CHUNK_SAMPLES + MEL_CONTEXT_SAMPLES)
  #rawHeard = 0
  /** The newest MEL_KEEP mel frames, oldest first; `#frames` were made since the reset. */
  readonly #melFrames = new Float32Array(MEL_KEEP * MEL_BINS)
  #frames = 0
  /**
   * Embeddings, oldest first, `#count` of them, per phase; one not yet made has `made` 0. The
   * further phases also keep their 8 mel frames per chunk, made when an embedding first needs them.
   */
  readonly #phases: readonly Phase[] = Array.from({ length: PHASES }, () => ({
    embeddings: new Float32Array(EMBEDDING_KEEP * EMBEDDING_SIZE),
    made: new Uint8Array(EMBEDDING_KEEP),
    mel: [],
  }))
  /**
   * The newest samples, for the further phases' own mel runs: the mel model's frames carry the
   * edges of the 1760 samples they were made from, so a window of phase 0's frames 4 frames
   * earlier is not what a detector whose chunks fell 40 ms later sees (it scored lower on the
   * bench's clips: bench/RESULTS.md, "the second phase"). Int16 values, oldest first.
   */
  readonly #history = new Int16Array(HISTORY_SAMPLES)
  /** For each embedding, the `#frames` count at its chunk: its window is the 76 frames before. */
  readonly #melEnd = new Float64Array(EMBEDDING_KEEP)
  #count = 0
  readonly #prefill: Float32Array
  /** Chunks whose mel frames one run made ahead (`prepare`), in order, for `step` to take. */
  readonly #ahead: { chunk: Int16Array; frames: Float32Array }[] = []
  /** Runs of several chunks still to check against chunk by chunk; -1: they differed, never. */
  #checksLeft = MEL_RUN_CHECKS

  private constructor(mel: ModelSession, embedding: ModelSession, prefill: Float32Array) {
    this.#mel = mel
    this.#embedding = embedding
    this.#prefill = prefill
    this.reset()
  }

  /** A pipeline on `mel` and `embedding`, its embeddings starting from `prefill` (`noisePrefill`). */
  static create(
    mel: ModelSession,
    embedding: ModelSession,
    prefill: Float32Array,
  ): FeaturePipeline {
    if (prefill.length === 0 || prefill.length % EMBEDDING_SIZE !== 0) {
      throw new Error(`features: a prefill of ${prefill.length} values is not whole embeddings`)
    }
    return new FeaturePipeline(mel, embedding, prefill.slice(-EMBEDDING_KEEP * EMBEDDING_SIZE))
  }

  /** Back to the state of a fresh start: no samples heard, mel frames all ones, the noise prefill. */
  reset(): void {
    this.#ahead.length = 0
    this.#raw.fill(0)
    this.#rawHeard = 0
    this.#melFrames.fill(1)
    this.#frames = 0
    // Both phases start from the same noise: it stands for a past nobody heard.
    this.#history.fill(0)
    for (const p of this.#phases) {
      p.mel.length = 0
      p.embeddings.fill(0)
      p.embeddings.set(this.#prefill)
      p.made.fill(1)
    }
    this.#count = this.#prefill.length / EMBEDDING_SIZE
  }

  /**
   * Adds one chunk (1280 int16 values): its 8 mel frames now, its embedding when `embed` asks.
   * The chunk is copied before the first await.
   */
  async step(chunk: Int16Array): Promise<void> {
    const raw = this.#raw
    raw.copyWithin(0, CHUNK_SAMPLES)
    for (let i = 0; i < CHUNK_SAMPLES; i++) raw[MEL_CONTEXT_SAMPLES + i] = chunk[i] ?? 0
    this.#history.copyWithin(0, CHUNK_SAMPLES)
    this.#history.set(chunk.subarray(0, CHUNK_SAMPLES), HISTORY_SAMPLES - CHUNK_SAMPLES)
    this.#rawHeard = Math.min(this.#rawHeard + CHUNK_SAMPLES, raw.length)
    const ahead = this.#ahead.shift()
    if (ahead && ahead.chunk !== chunk) this.#ahead.length = 0
    // Upstream's first chunk has no context yet (1280 samples → 5 frames); every later one has it.
    const spec =
      ahead?.chunk === chunk
        ? ahead.frames
        : await melFrames(this.#mel, raw.subarray(raw.length - this.#rawHeard))
    const n = Math.min(spec.length / MEL_BINS, MEL_KEEP)
    const mel = this.#melFrames
    mel.copyWithin(0, n * MEL_BINS)
    mel.set(spec.subarray(spec.length - n * MEL_BINS), (MEL_KEEP - n) * MEL_BINS)
    this.#frames += n
    if (this.#count === EMBEDDING_KEEP) {
      for (const p of this.#phases) {
        p.embeddings.copyWithin(0, EMBEDDING_SIZE)
        p.made.copyWithin(0, 1)
      }
      this.#melEnd.copyWithin(0, 1)
      for (const p of this.#phases) p.mel.shift()
      this.#count--
    }
    for (const p of this.#phases) {
      p.made[this.#count] = 0
      p.mel[this.#count] = undefined
    }
    this.#melEnd[this.#count] = this.#frames
    this.#count++
  }

  /**
   * The mel frames of the `chunks` to be stepped next, in order, made in one run of the mel model
   * (each chunk's 1760 samples are the same samples in it, and its frames the same values, bit
   * for bit) where that floor bound nothing (MEL_RANGE); `step` takes them. A run that woke from
   * sleep costs 2–3× a run hot, so this is most of the mel model's cost while a talking room's
   * chunks come 4 at a time. Otherwise (the first chunk after a reset, a floor that bound, runs
   * that differed) each chunk's step runs its own.
   */
  async prepare(chunks: readonly Int16Array[]): Promise<void> {
    this.#ahead.length = 0
    const n = chunks.length
    if (n < 2 || this.#checksLeft < 0 || this.#rawHeard < MEL_CONTEXT_SAMPLES) return
    if (chunks.some((c) => c.length < CHUNK_SAMPLES)) return
    const input = new Float32Array(MEL_CONTEXT_SAMPLES + n * CHUNK_SAMPLES)
    input.set(this.#raw.subarray(this.#raw.length - MEL_CONTEXT_SAMPLES))
    for (const [i, c] of chunks.entries()) {
      for (let j = 0; j < CHUNK_SAMPLES; j++) {
        input[MEL_CONTEXT_SAMPLES + i * CHUNK_SAMPLES + j] = c[j] ?? 0
      }
    }
    const out = await this.#mel.run(input, [1, input.length])
    const each = 8 * MEL_BINS
    if (out.length !== n * each) return
    let low = Number.POSITIVE_INFINITY
    let high = Number.NEGATIVE_INFINITY
    for (const v of out) {
      if (v < low) low = v
      if (v > high) high = v
    }
    if (!(low > high - MEL_RANGE)) return
    const spec = scaled(this.#mel, out)
    const frames = chunks.map((chunk, i) => ({
      chunk,
      frames: spec.subarray(i * each, (i + 1) * each),
    }))
    if (this.#checksLeft > 0 && !(await this.#sameAsEach(input, spec))) {
      this.#checksLeft = -1
      return
    }
    this.#ahead.push(...frames)
  }

  /** Whether each chunk's own run gives the frames `spec` has for it, bit for bit. */
  async #sameAsEach(input: Float32Array, spec: Float32Array): Promise<boolean> {
    this.#checksLeft--
    const each = 8 * MEL_BINS
    for (let i = 0; (i + 1) * each <= spec.length; i++) {
      const one = input.subarray(
        i * CHUNK_SAMPLES,
        i * CHUNK_SAMPLES + CHUNK_SAMPLES + MEL_CONTEXT_SAMPLES,
      )
      const own = await melFrames(this.#mel, one)
      if (own.some((v, j) => !Object.is(v, spec[i * each + j]))) return false
    }
    return true
  }

  /**
   * Makes whichever of the newest `n` embeddings of `phase` (0: at the chunks' ends, p: p × 20 ms
   * before them) are not made yet, oldest first.
   */
  async embed(n: number, phase = 0): Promise<void> {
    const p = this.#phase(phase)
    if (phase > 0 && n > OFFSET_KEEP) {
      throw new Error(`features.embed(${n}, ${phase}): a further phase keeps ${OFFSET_KEEP} chunks`)
    }
    for (let k = Math.max(0, this.#count - n); k < this.#count; k++) {
      if (p.made[k] === 1) continue
      const window = phase === 0 ? this.#melWindow(k) : await this.#offsetWindow(k, phase)
      const embedding = await this.#embedding.run(window, [1, EMBEDDING_WINDOW, MEL_BINS, 1])
      checkLength(this.#embedding, embedding, EMBEDDING_SIZE)
      p.embeddings.set(embedding, k * EMBEDDING_SIZE)
      p.made[k] = 1
    }
  }

  #phase(phase: number): Phase {
    const p = this.#phases[phase]
    if (!p) throw new RangeError(`features: phase ${phase} is not one of 0–${PHASES - 1}`)
    return p
  }

  /** Embedding `k`'s 76 mel frames: they end this many frames before the newest (MEL_KEEP covers every kept one). */
  #melWindow(k: number): Float32Array {
    const back = this.#frames - (this.#melEnd[k] ?? 0)
    const end = (MEL_KEEP - back) * MEL_BINS
    return this.#melFrames.slice(end - EMBEDDING_WINDOW * MEL_BINS, end)
  }

  /**
   * A further phase's 76 mel frames for embedding `k`: the mel model's own runs on 1760 samples
   * ending `phase` × 20 ms before each of the chunks they span, as a detector whose chunks fell
   * there makes them (those made for an earlier embedding are kept).
   */
  async #offsetWindow(k: number, phase: number): Promise<Float32Array> {
    const kept = this.#phase(phase).mel
    const frames = new Float32Array(EMBEDDING_CHUNKS * 8 * MEL_BINS)
    for (let c = 0; c < EMBEDDING_CHUNKS; c++) {
      const j = k - EMBEDDING_CHUNKS + 1 + c
      let mel = j >= 0 ? kept[j] : undefined
      if (!mel) {
        const back = (this.#count - 1 - j) * CHUNK_SAMPLES + phase * PHASE_SAMPLES
        const end = HISTORY_SAMPLES - back
        const samples = Float32Array.from(this.#history.subarray(end - this.#raw.length, end))
        mel = await melFrames(this.#mel, samples)
        if (j >= 0) kept[j] = mel
      }
      frames.set(mel.subarray(mel.length - 8 * MEL_BINS), c * 8 * MEL_BINS)
    }
    return frames.slice(frames.length - EMBEDDING_WINDOW * MEL_BINS)
  }

  /**
   * The `n` embeddings of `phase` ending `back` chunks before the newest, oldest first, as one
   * `[1, n, 96]` tensor's data (a copy).
   */
  latest(n: number, back = 0, phase = 0): Float32Array {
    const p = this.#phase(phase)
    const end = this.#count - back
    const take = Math.min(n, end)
    if (p.made.subarray(end - take, end).includes(0)) {
      throw new Error(`features.latest(${n}, ${back}) before embed: an embedding is not made yet`)
    }
    const out = new Float32Array(n * EMBEDDING_SIZE)
    out.set(
      p.embeddings.subarray((end - take) * EMBEDDING_SIZE, end * EMBEDDING_SIZE),
      (n - take) * EMBEDDING_SIZE,
    )
    return out
  }

  /**
   * The newest `n` embeddings with each one not made yet stood in for: the line between the made
   * ones either side of it (the nearest made one where there is none on one side). A coarse
   * window, for a coarse score, at the cost of the made ones alone: neighbouring embeddings share
   * most of their 76 mel frames, so they change smoothly.
   */
  approximate(n: number): Float32Array {
    const out = new Float32Array(n * EMBEDDING_SIZE)
    const first = this.#count - Math.min(n, this.#count)
    const pad = n - (this.#count - first)
    const { embeddings: e, made } = this.#phase(0)
    let before = -1
    for (let k = first - 1; k >= 0 && before < 0; k--) if (made[k] === 1) before = k
    for (let k = first; k < this.#count; k++) {
      const at = (pad + k - first) * EMBEDDING_SIZE
      if (made[k] === 1) {
        out.set(e.subarray(k * EMBEDDING_SIZE, (k + 1) * EMBEDDING_SIZE), at)
        before = k
        continue
      }
      let after = -1
      for (let j = k + 1; j < this.#count && after < 0; j++) if (made[j] === 1) after = j
      if (before < 0 && after < 0) throw new Error('features.approximate: no embedding is made')
      const a = before < 0 ? after : before
      const b = after < 0 ? before : after
      const t = a === b ? 0 : (k - a) / (b - a)
      for (let i = 0; i < EMBEDDING_SIZE; i++) {
        const x = e[a * EMBEDDING_SIZE + i] ?? 0
        out[at + i] = x + t * ((e[b * EMBEDDING_SIZE + i] ?? 0) - x)
      }
    }
    return out
  }
}

/**
 * Checks both models' shapes and makes the noise prefill: the embeddings of 4 s of seeded noise, of
 * which the newest `reach`, the most any window read after a start or a reset reaches back (the
 * longest head's window and the chunks scored late; load-detector.ts). Upstream makes all ~40; the
 * older ones would never be read, and the ones made are the same windows of the same noise, so every
 * score is the same, and a start pays ~2 ms of CPU less for each one left out. Run where the models
 * are (model-worker.ts). `checked` is called once both models have given an output of the right
 * size (the mel frames, then the newest window's embedding, made first): what is left cannot fail
 * on the models' account, so the runtime's thread answers a start then and makes the rest before
 * the first chunk (remote-chain.ts).
 */
export async function noisePrefill(
  mel: ModelSession,
  embedding: ModelSession,
  reach: number,
  checked?: () => void,
): Promise<Float32Array> {
  expectShape(mel, [null, null], 'the mel spectrogram model (melspectrogram.onnx)')
  expectShape(
    embedding,
    [null, EMBEDDING_WINDOW, MEL_BINS, 1],
    'the embedding model (embedding_model.onnx)',
  )
  const noise = new Float32Array(PREFILL_SAMPLES)
  const random = mulberry32(PREFILL_SEED)
  for (let i = 0; i < noise.length; i++) {
    noise[i] = Math.floor(random() * 2 * PREFILL_AMPLITUDE) - PREFILL_AMPLITUDE
  }
  const spec = await melFrames(mel, noise)
  const frames = spec.length / MEL_BINS
  // Windows of 76 frames every 8 (one chunk), as upstream's _get_embeddings. One window per run,
  // not one batch: a batch of ~40 makes the runtime keep ~25 MB of activations for good.
  const starts: number[] = []
  for (let start = 0; start + EMBEDDING_WINDOW <= frames; start += 8) starts.push(start)
  const windows = starts
    .slice(-Math.max(1, Math.min(reach, EMBEDDING_KEEP)))
    .map((start) => spec.slice(start * MEL_BINS, (start + EMBEDDING_WINDOW) * MEL_BINS))
  const dims = [1, EMBEDDING_WINDOW, MEL_BINS, 1]
  const out = new Float32Array(windows.length * EMBEDDING_SIZE)
  // Newest first: each window's embedding is its own run, so the order changes no value.
  for (let i = windows.length - 1; i >= 0; i--) {
    const one = await embedding.run(windows[i] as Float32Array, dims)
    checkLength(embedding, one, EMBEDDING_SIZE)
    out.set(one, i * EMBEDDING_SIZE)
    if (i === windows.length - 1) checked?.()
  }
  return out
}

/** One phase's embeddings, kept, and which are made; a further phase's mel frames per chunk. */
interface Phase {
  readonly embeddings: Float32Array
  readonly made: Uint8Array
  readonly mel: (Float32Array | undefined)[]
}

/** The mel model on int16 values; frames scaled x/10 + 2 as upstream does. */
async function melFrames(mel: ModelSession, samples: Float32Array): Promise<Float32Array> {
  return scaled(mel, await mel.run(samples.slice(), [1, samples.length]))
}

/** The mel model's output checked and scaled in place. */
function scaled(mel: ModelSession, out: Float32Array): Float32Array {
  if (out.length % MEL_BINS !== 0 || out.length === 0) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `${mel.file} gave ${out.length} values, not frames of ${MEL_BINS} mel bins: it is not openWakeWord's melspectrogram.onnx; install the models again with \`nocturn wake install <name>\``,
    )
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] ?? 0) / 10 + 2
  return out
}

/** Checks a model's declared input shape (null: any size, e.g. a batch). */
export function expectShape(
  model: ModelSession,
  expected: readonly (number | null)[],
  what: string,
): void {
  const shape = model.inputShape
  const fits =
    shape.length === expected.length &&
    expected.every((e, i) => e === null || typeof shape[i] !== 'number' || shape[i] === e)
  if (!fits) {
    const want = expected.map((e) => (e === null ? 'N' : String(e))).join(', ')
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `${model.file} takes input [${shape.join(', ')}], but ${what} takes [${want}] (16 kHz audio): it is a model for another pipeline or sample rate; use openWakeWord's ${what}`,
    )
  }
}

function checkLength(model: ModelSession, out: Float32Array, expected: number): void {
  if (out.length !== expected) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `${model.file} gave ${out.length} values where ${expected} were expected: it is not openWakeWord's embedding model; install the models again with \`nocturn wake install <name>\``,
    )
  }
}

/** A small seeded generator, so the prefill (and so every score) is the same on every run. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
