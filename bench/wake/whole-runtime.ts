// The native runtime in this thread (no hand-offs to the runtime's own thread, model-thread.ts):
// `streamed` false, every model run whole, as before the embedding model was streamed (issue 47);
// true, the sessions the service's thread loads (the embedding model streamed). The two sides of
// `BENCH_ONLY=streamed` (coarse.ts): the same thread, so only the streaming differs.
import { readFileSync } from 'node:fs'
import type { InferenceRuntime } from '../../src/adapters/openwakeword/model-session.js'
import { importNative, loadSession } from '../../src/adapters/openwakeword/runtime.js'

export async function inThreadRuntime(streamed: boolean): Promise<InferenceRuntime> {
  const ort = await importNative()
  if (streamed) {
    return {
      name: 'native',
      async load(file) {
        const s = await loadSession(ort, 'native', file)
        await s.stream?.()
        return s
      },
    }
  }
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
