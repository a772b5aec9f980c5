import { createRequire } from 'node:module'
import type { Ort, OrtSession, OrtTensor } from './ort-api.js'

/**
 * onnxruntime-node's sessions made on its binding, each run called on the calling thread as it is.
 * The package's own `run` is a synchronous call wrapped in `setImmediate`: every model run waits
 * for a turn of the thread's event loop, and its session layer checks the feeds and wraps the
 * outputs again. A scored chunk is several runs (the mel model, the embedding's parts, each head),
 * so on the runtime's own thread, which does nothing else, that is a loop turn per run for
 * nothing: ~20 µs a run here (bench/RESULTS.md, "each native run called as it is"). The binding
 * is the layer the package's API sits on (`dist/binding`, typed by its `binding.d.ts`), and the
 * same library runs the same graph: the floats are the same (test/adapters/openwakeword/
 * native-sessions.test.ts holds them to the package's API for every model of the package).
 */

interface ValueMetadata {
  readonly name: string
  readonly isTensor: boolean
  readonly symbolicDimensions: readonly string[]
  readonly shape: readonly number[]
}

interface BindingSession {
  loadModel(buffer: ArrayBufferLike, byteOffset: number, byteLength: number, options: object): void
  readonly inputMetadata: readonly ValueMetadata[]
  readonly outputMetadata: readonly ValueMetadata[]
  run(
    feeds: Record<string, OrtTensor>,
    fetches: Record<string, null>,
    options: object,
  ): Record<string, OrtTensor>
  dispose(): void
}

interface BindingModule {
  readonly binding: { readonly InferenceSession: new () => BindingSession }
  readonly initOrt: () => void
}

/**
 * Makes sessions on onnxruntime-node's binding; undefined where it is not the binding this was
 * written for (another version's layout): the package's own API is used then, as before.
 */
export function nativeSessions(): Ort['InferenceSession'] | undefined {
  let m: Partial<BindingModule>
  try {
    m = createRequire(import.meta.url)('onnxruntime-node/dist/binding') as Partial<BindingModule>
  } catch {
    return undefined
  }
  const made = m.binding?.InferenceSession
  const init = m.initOrt
  if (typeof made !== 'function' || typeof init !== 'function') return undefined
  return {
    async create(model, options = {}) {
      // Once per thread: the runtime's environment and the tensor type its outputs are made of.
      init()
      const s = new made()
      s.loadModel(model.buffer, model.byteOffset, model.byteLength, options)
      return session(s)
    },
  }
}

function session(s: BindingSession): OrtSession {
  const inputNames = s.inputMetadata.map((v) => v.name)
  const outputNames = s.outputMetadata.map((v) => v.name)
  // Every output asked for, as the package's API asks when given none.
  const fetches = Object.fromEntries(outputNames.map((n) => [n, null]))
  return {
    inputNames,
    outputNames,
    // As the package's API reports them: a dimension of no fixed size by its symbolic name.
    inputMetadata: s.inputMetadata.map((v) => ({
      name: v.name,
      isTensor: v.isTensor,
      ...(v.isTensor && {
        shape: v.shape.map((d, i) => (d === -1 ? (v.symbolicDimensions[i] ?? '') : d)),
      }),
    })),
    run: async (feeds) => s.run(feeds, fetches, {}),
    release: async () => s.dispose(),
  }
}
