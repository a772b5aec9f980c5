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
/** The embedding buffer starts from 4 s of random noise in ±1000, as upstream's does. */
const PREFILL_SAMPLES = 4 * SAMPLE_RATE_HZ
const PREFILL_AMPLITUDE = 1000
/** The noise is seeded, so every run scores the same. */
const PREFILL_SEED = 1

export class FeaturePipeline {
  readonly #mel: ModelSession
  readonly #embedding: ModelSession
  /** The newest samples (up to chunk + context), as int16 values in float32. */
  readonly #raw = new Float32Array(CHUNK_SAMPLES + MEL_CONTEXT_SAMPLES)
  #rawHeard = 0
  /** The newest MEL_KEEP mel frames, oldest first; `#frames` were made since the reset. */
  readonly #melFrames = new Float32Array(MEL_KEEP * MEL_BINS)
  #frames = 0
  /** Embeddings, oldest first, `#count` of them; one not yet made has `#made` 0. */
  readonly #embeddings = new Float32Array(EMBEDDING_KEEP * EMBEDDING_SIZE)
  readonly #made = new Uint8Array(EMBEDDING_KEEP)
  /** For each embedding, the `#frames` count at its chunk: its window is the 76 frames before. */
  readonly #melEnd = new Float64Array(EMBEDDING_KEEP)
  #count = 0
  readonly #prefill: Float32Array
  /** Mel frames made ahead (`melAhead`) for the next chunks `step` is given, oldest first. */
  #ahead: Float32Array[] = []

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
    this.#raw.fill(0)
    this.#rawHeard = 0
    this.#melFrames.fill(1)
    this.#frames = 0
    this.#embeddings.fill(0)
    this.#embeddings.set(this.#prefill)
    this.#count = this.#prefill.length / EMBEDDING_SIZE
    this.#made.fill(1)
    this.#ahead = []
  }

  /**
   * Makes the mel frames of the next `chunks` (the ones `step` will be given next, in order) in
   * one hand-off to the runtime: each chunk's own run on its own 1760 samples, as `step` would
   * run it, so the frames are the same. Copies the chunks before its first await. Right after a
   * start or a reset (no context yet) it does nothing and `step` runs the model itself.
   */
  async melAhead(chunks: readonly Int16Array[]): Promise<void> {
    const raw = this.#raw
    if (!this.#mel.runMany || this.#rawHeard < raw.length || chunks.length === 0) return
    const inputs: Float32Array[] = []
    let before = raw
    for (const chunk of chunks) {
      const input = new Float32Array(raw.length)
      input.set(before.subarray(CHUNK_SAMPLES))
      for (let i = 0; i < CHUNK_SAMPLES; i++) input[MEL_CONTEXT_SAMPLES + i] = chunk[i] ?? 0
      inputs.push(input)
      before = input
    }
    const outs = await this.#mel.runMany(inputs, [1, raw.length])
    this.#ahead = outs.map((out) => scaled(this.#mel, out))
  }

  /**
   * Adds one chunk (1280 int16 values): its 8 mel frames now, its embedding when `embed` asks.
   * The chunk is copied before the first await.
   */
  async step(chunk: Int16Array): Promise<void> {
    const raw = this.#raw
    raw.copyWithin(0, CHUNK_SAMPLES)
    for (let i = 0; i < CHUNK_SAMPLES; i++) raw[MEL_CONTEXT_SAMPLES + i] = chunk[i] ?? 0
    this.#rawHeard = Math.min(this.#rawHeard + CHUNK_SAMPLES, raw.length)
    // Upstream's first chunk has no context yet (1280 samples → 5 frames); every later one has it.
    const spec =
      this.#ahead.shift() ?? (await melFrames(this.#mel, raw.subarray(raw.length - this.#rawHeard)))
    const n = Math.min(spec.length / MEL_BINS, MEL_KEEP)
    const mel = this.#melFrames
    mel.copyWithin(0, n * MEL_BINS)
    mel.set(spec.subarray(spec.length - n * MEL_BINS), (MEL_KEEP - n) * MEL_BINS)
    this.#frames += n
    if (this.#count === EMBEDDING_KEEP) {
      this.#embeddings.copyWithin(0, EMBEDDING_SIZE)
      this.#made.copyWithin(0, 1)
      this.#melEnd.copyWithin(0, 1)
      this.#count--
    }
    this.#made[this.#count] = 0
    this.#melEnd[this.#count] = this.#frames
    this.#count++
  }

  /** Makes whichever of the newest `n` embeddings are not made yet, oldest first. */
  async embed(n: number): Promise<void> {
    for (let k = Math.max(0, this.#count - n); k < this.#count; k++) {
      if (this.#made[k] === 1) continue
      // Its 76 frames end this many frames before the newest; MEL_KEEP covers every kept one.
      const back = this.#frames - (this.#melEnd[k] ?? 0)
      const end = (MEL_KEEP - back) * MEL_BINS
      const window = this.#melFrames.slice(end - EMBEDDING_WINDOW * MEL_BINS, end)
      const embedding = await this.#embedding.run(window, [1, EMBEDDING_WINDOW, MEL_BINS, 1])
      checkLength(this.#embedding, embedding, EMBEDDING_SIZE)
      this.#embeddings.set(embedding, k * EMBEDDING_SIZE)
      this.#made[k] = 1
    }
  }

  /**
   * The `n` embeddings ending `back` chunks before the newest, oldest first, as one `[1, n, 96]`
   * tensor's data (a copy).
   */
  latest(n: number, back = 0): Float32Array {
    const end = this.#count - back
    const take = Math.min(n, end)
    if (this.#made.subarray(end - take, end).includes(0)) {
      throw new Error(`features.latest(${n}, ${back}) before embed: an embedding is not made yet`)
    }
    const out = new Float32Array(n * EMBEDDING_SIZE)
    out.set(
      this.#embeddings.subarray((end - take) * EMBEDDING_SIZE, end * EMBEDDING_SIZE),
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
    const e = this.#embeddings
    let before = -1
    for (let k = first - 1; k >= 0 && before < 0; k--) if (this.#made[k] === 1) before = k
    for (let k = first; k < this.#count; k++) {
      const at = (pad + k - first) * EMBEDDING_SIZE
      if (this.#made[k] === 1) {
        out.set(e.subarray(k * EMBEDDING_SIZE, (k + 1) * EMBEDDING_SIZE), at)
        before = k
        continue
      }
      let after = -1
      for (let j = k + 1; j < this.#count && after < 0; j++) if (this.#made[j] === 1) after = j
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
 * are (model-worker.ts): a start waits for it.
 */
export async function noisePrefill(
  mel: ModelSession,
  embedding: ModelSession,
  reach: number,
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
  for (const [i, window] of windows.entries()) {
    const one = await embedding.run(window, dims)
    checkLength(embedding, one, EMBEDDING_SIZE)
    out.set(one, i * EMBEDDING_SIZE)
  }
  return out
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
