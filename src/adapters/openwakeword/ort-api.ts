/** The part of the onnxruntime JavaScript API (shared by -node and -web) used here. */
export interface OrtTensor {
  readonly data: unknown
  readonly dims: readonly number[]
}

export interface OrtSession {
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  readonly inputMetadata?: readonly {
    name: string
    isTensor: boolean
    shape?: readonly unknown[]
  }[]
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>
  release(): Promise<void>
}

export interface Ort {
  InferenceSession: {
    create(model: Uint8Array, options?: Record<string, unknown>): Promise<OrtSession>
  }
  Tensor: new (type: 'float32', data: Float32Array, dims: readonly number[]) => OrtTensor
  env?: { wasm?: { numThreads?: number; wasmPaths?: string; proxy?: boolean } }
}
