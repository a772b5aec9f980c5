/**
 * The seam between the wake-word pipeline and an ONNX runtime: a model is loaded from a file and
 * run on one float32 tensor. Both runtimes (onnxruntime-node's native library, onnxruntime-web's
 * WASM build) sit behind it, and a test can put a slow one here to see the detector fall behind.
 */
export interface ModelSession {
  /** The model file, for messages. */
  readonly file: string
  readonly inputName: string
  /** The input's shape as the model declares it; a symbolic dimension (batch, samples) is a string. */
  readonly inputShape: readonly (number | string)[]
  run(input: Float32Array, dims: readonly number[]): Promise<Float32Array>
  close(): Promise<void>
}

export type RuntimeName = 'native' | 'wasm'

export interface InferenceRuntime {
  readonly name: RuntimeName
  load(file: string): Promise<ModelSession>
  /**
   * Every model is loaded: from here on scoring is best-effort and yields the CPU to the event
   * loop (model-worker.ts). Loading itself runs at the process's priority, so a start is not slowed.
   */
  background?(): void
  /**
   * The feature chain and the heads, kept where the runtime runs them (model-thread.ts), so a
   * chunk costs one hand-off; `mel`, `embedding` and `heads` are sessions this runtime loaded.
   * Without it the detector scores in process (`LocalScorer`).
   */
  scorer?(
    mel: ModelSession,
    embedding: ModelSession,
    heads: readonly ModelSession[],
  ): Promise<ChunkScorer>
}

/** One chunk's exact scores, one per head; the window of each head that reached its gate. */
export interface ExactScores {
  readonly scores: number[]
  readonly windows: (Float32Array | undefined)[]
}

/**
 * The feature state (mel frames, embeddings) and every head, behind one seam: the detector says
 * which chunks came and which scores it needs, and gets the heads' scores back. On the runtime's
 * thread (model-thread.ts) a chunk's mel, embedding and heads are then one hand-off, not one per
 * model run; in process (a test's runtime) it is the `LocalScorer` itself (scorer.ts).
 */
export interface ChunkScorer {
  /** The next chunk (1280 int16 values, copied): its mel frames, now or with the next request. */
  step(chunk: Int16Array): Promise<void>
  /** Back to a fresh start (called only while no request is outstanding). */
  reset(): void
  /** One embedding for the newest chunk, the window's others stood in for; every head's score. */
  coarse(): Promise<number[]>
  /**
   * Exact scores for the newest `behind` chunks, oldest first (their missing embeddings made).
   * `gates[i]`: head i's window comes back where its score is at least this (its verifier's).
   */
  exact(behind: number, gates: readonly number[]): Promise<ExactScores[]>
  /** Forgets the chain's state; the models are closed by their owner (the detector). */
  close(): Promise<void>
}
