// The native runtime in this thread with every model run whole, as before the embedding model
// was streamed (issue 47): the "before" side of `BENCH_ONLY=streamed` (coarse.ts). The service
// runs its models on a thread of their own (model-thread.ts), streaming the embedding model.
import { readFileSync } from 'node:fs'
import type { InferenceRuntime } from '../../src/adapters/openwakeword/model-session.js'
import { importNative } from '../../src/adapters/openwakeword/runtime.js'

export async function wholeRuntime(): Promise<InferenceRuntime> {
  const ort = await importNative()
  return {
    name: 'native',
    async load(file) {
      const s = await ort.InferenceSession.create(readFileSync(file), {
        executionProviders: ['cpu'],
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
      })
      const [input = '', output = ''] = [s.inputNames[0], s.outputNames[0]]
      const meta = s.inputMetadata?.find((m) => m.name === input)
      const run = async (data: Float32Array, dims: readonly number[]) =>
        (await s.run({ [input]: new ort.Tensor('float32', data, dims) }))[output]
          ?.data as Float32Array
      return {
        file,
        inputName: input,
        inputShape: (meta?.shape ?? []).map((d) => (typeof d === 'number' ? d : String(d))),
        run,
        close: () => s.release(),
      }
    },
  }
}
