import type { EmbeddingMode } from './streaming-embedding.js'

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
  /**
   * The embedding model runs streamed (streaming-embedding.ts); false or absent: whole. It starts
   * as its parts run whole, and `stream` switches it once its streamed run is checked; the
   * detector logs which.
   */
  readonly streamed?: boolean
  /**
   * The embedding model only: makes and checks its streamed run and switches to it (the same
   * embeddings), off the start's path; resolves with how it runs from then on.
   */
  stream?(): Promise<EmbeddingMode>
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
   * The noise prefill (features.ts, `noisePrefill`) made where the models run, in one request: a
   * start waits for it, and on the runtime's thread each of its ~25 runs would otherwise be a
   * hand-off to the event loop and back, which a busy start answers late. Without it the caller
   * makes it with the sessions. `mel` and `embedding` are sessions this runtime loaded.
   */
  prefill?(mel: ModelSession, embedding: ModelSession, reach: number): Promise<Float32Array>
}
