import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { errorText, NocturnError } from '../../core/errors.js'
import type { ModelSession, RuntimeName } from './model-session.js'
import { modelThreadRuntime, type ThreadRuntime } from './model-thread.js'
import { nativeSessions } from './native-sessions.js'
import { graphInputs, type OnnxInput } from './onnx-graph.js'
import type { Ort, OrtSession } from './ort-api.js'
import {
  type EmbeddingParts,
  embeddingParts,
  type Stage,
  switchingEmbedding,
} from './streaming-embedding.js'

export type RuntimeChoice = 'auto' | RuntimeName
const RUNTIME_CHOICES: readonly RuntimeChoice[] = ['auto', 'native', 'wasm']

/** Where onnxruntime-node ships a native library (bin/napi-v6/<platform>/<arch>). */
const NATIVE_PLATFORMS = new Set(['linux/x64', 'linux/arm64', 'darwin/arm64', 'win32/x64'])

/**
 * onnxruntime-node's native files as they are mapped into the process: the runtime and its Node
 * binding. Their code touched once by the load is given back after it (app/compose/cold-pages.ts).
 */
export const NATIVE_LIBRARIES: readonly string[] = ['libonnxruntime.so', 'onnxruntime_binding.node']

/** The runtime `auto` means here: the native library where the package has one, else WASM. */
function autoRuntime(platform = process.platform, arch = process.arch): RuntimeName {
  return NATIVE_PLATFORMS.has(`${platform}/${arch}`) ? 'native' : 'wasm'
}

/**
 * Loads the chosen runtime on first use only: neither package may load while no wake model is
 * configured (test/app/lazy-loading.test.ts), and the WASM one costs 1–2 s and ~70 MB to start.
 */
export async function loadRuntime(choice: RuntimeChoice): Promise<ThreadRuntime> {
  if (!RUNTIME_CHOICES.includes(choice)) {
    throw new NocturnError(
      'NOC_ERR_WAKE_RUNTIME',
      `unknown wake-word runtime "${String(choice)}": use "auto", "native" or "wasm" (listen.wake.runtime)`,
    )
  }
  const name = choice === 'auto' ? autoRuntime() : choice
  // Both runtimes run a model synchronously on the calling thread, so both run on a thread of
  // their own (model-thread.ts); a runtime that does not load there fails the first model's load
  // with this file's message.
  return modelThreadRuntime(name)
}

/**
 * onnxruntime-node, its sessions made on its binding so that each run is called as it is
 * (native-sessions.ts); model-worker.ts calls it on the runtime's own thread.
 */
export async function importNative(): Promise<Ort> {
  let ort: Ort
  try {
    // The native binding is CommonJS; its module object carries the API.
    const require = createRequire(import.meta.url)
    ort = require('onnxruntime-node') as Ort
  } catch (err) {
    throw new NocturnError(
      'NOC_ERR_WAKE_RUNTIME',
      `the native wake-word runtime (onnxruntime-node) does not load on ${process.platform}/${process.arch} (${firstLine(err)}); set listen.wake.runtime to "wasm"`,
      { cause: err },
    )
  }
  const direct = nativeSessions()
  return direct ? { ...ort, InferenceSession: direct } : ort
}

/** onnxruntime-web, set up for one thread; model-worker.ts calls it on the runtime's own thread. */
export async function importWasm(): Promise<Ort> {
  try {
    const require = createRequire(import.meta.url)
    const ort = require('onnxruntime-web') as Ort
    if (ort.env?.wasm) {
      // One thread, the calling one (itself a worker: model-thread.ts): no pool of threads to start
      // on a small board, and the wake word needs a few ms per 80 ms chunk. The .wasm is read
      // from the package's own folder.
      ort.env.wasm.numThreads = 1
      ort.env.wasm.proxy = false
      ort.env.wasm.wasmPaths = `${join(dirname(require.resolve('onnxruntime-web')), '/')}`
    }
    return ort
  } catch (err) {
    throw new NocturnError(
      'NOC_ERR_WAKE_RUNTIME',
      `the WASM wake-word runtime (onnxruntime-web) does not load (${firstLine(err)}); reinstall Nocturn (npm ci)`,
      { cause: err },
    )
  }
}

/** One model on a loaded runtime, its input checked: what every ModelSession here is. */
export async function loadSession(
  ort: Ort,
  runtime: RuntimeName,
  file: string,
): Promise<ModelSession> {
  let bytes: Uint8Array
  try {
    bytes = await readFile(file)
  } catch (err) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_MISSING',
      `wake-word model ${file} cannot be read (${firstLine(err)}): install one with \`nocturn wake install <name>\` or fix the path in listen.wake.models`,
      { cause: err },
    )
  }
  // The embedding model listens as its three parts (streaming-embedding.ts), run whole until
  // `stream()` has checked their streamed run after listening started. Its input is read from
  // its graph: no session of the whole model is made unless the parts cannot be.
  const declared = declaredInput(bytes)
  const embedding = declared !== undefined && isEmbeddingShape(declared.shape)
  if (declared && embedding) {
    const e = await embeddingInParts(ort, runtime, bytes, declared.shape)
    if (e) {
      return {
        ...modelSession(file, declared.name, declared.shape, e.run, e.close),
        stream: e.stream,
        get streamed() {
          return e.streamed
        },
      }
    }
  }
  let session: OrtSession
  try {
    session = await createSession(ort, runtime, bytes, embedding ? 'embedding' : 'other')
  } catch (err) {
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_INVALID',
      `wake-word model ${file} is not a usable ONNX model (${firstLine(err)}): install it again with \`nocturn wake install <name>\`, or point listen.wake.models at an openWakeWord .onnx file`,
      { cause: err },
    )
  }
  const inputName = session.inputNames[0]
  const outputName = session.outputNames[0]
  if (!inputName || !outputName || session.inputNames.length !== 1) {
    await session.release()
    throw new NocturnError(
      'NOC_ERR_WAKE_MODEL_SHAPE',
      `wake-word model ${file} has ${session.inputNames.length} inputs; an openWakeWord model has one: use an openWakeWord .onnx file`,
    )
  }
  const meta = session.inputMetadata?.find((m) => m.name === inputName)
  const inputShape = (meta?.shape ?? []).map((d) => (typeof d === 'number' ? d : String(d)))
  const whole = session
  const run = async (input: Float32Array, dims: readonly number[]) => {
    const out = await whole.run({ [inputName]: new ort.Tensor('float32', input, dims) })
    const data = out[outputName]?.data
    if (!(data instanceof Float32Array)) {
      throw new NocturnError(
        'NOC_ERR_WAKE_MODEL_SHAPE',
        `wake-word model ${file} did not give float32 scores: use an openWakeWord .onnx file`,
      )
    }
    return data
  }
  return modelSession(file, inputName, inputShape, run, () => whole.release())
}

type Run = (input: Float32Array, dims: readonly number[]) => Promise<Float32Array>

function modelSession(
  file: string,
  inputName: string,
  inputShape: readonly (number | string)[],
  run: Run,
  close: () => Promise<void>,
): ModelSession {
  return {
    file,
    inputName,
    inputShape,
    run,
    close,
  }
}

/**
 * `embedding`: the embedding model, or one of its parts; `part`: a part of the streamed embedding
 * model, given inputs of several lengths (a whole window, the new frames of a move by 1, 2…
 * steps). The runtime plans and keeps a memory pattern for each length it sees; without them the
 * parts take 2–5 MB less and no measurable CPU more.
 *
 * The embedding's convolutions run in the layout the `all` level gives them, as upstream's do
 * (`extended` gives other floats, by up to 3e-5). For the mel model and the heads `extended` gives
 * the same floats as `all` (test/adapters/openwakeword/optimization-level.test.ts) at the same run
 * time, and is made 2–4× quicker (a head 3.3 ms of CPU against 12.6 here): a start waits for each.
 */
function createSession(
  ort: Ort,
  runtime: RuntimeName,
  bytes: Uint8Array,
  model: 'embedding' | 'part' | 'other',
): Promise<OrtSession> {
  return ort.InferenceSession.create(bytes, {
    executionProviders: [runtime === 'native' ? 'cpu' : 'wasm'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: model === 'other' ? 'extended' : 'all',
    ...(model === 'part' ? { enableMemPattern: false } : {}),
  })
}

/**
 * The model's one input as its graph declares it (what a session of it reports: checked for
 * every model of the package by test/adapters/openwakeword/onnx-graph.test.ts); undefined when
 * the graph cannot be read or has other than one input (a session then says what is wrong).
 */
function declaredInput(bytes: Uint8Array): OnnxInput | undefined {
  try {
    const inputs = graphInputs(bytes)
    return inputs.length === 1 ? inputs[0] : undefined
  } catch {
    return undefined
  }
}

/** openWakeWord's embedding model takes [batch, 76 frames, 32 bins, 1]. */
function isEmbeddingShape(shape: readonly (number | string)[]): boolean {
  return shape.length === 4 && shape[1] === 76 && typeof shape[2] === 'number' && shape[3] === 1
}

/**
 * The embedding model cut into three parts that keep their activations from one window to the
 * next (streaming-embedding.ts), run whole until `stream()` has checked their streaming;
 * undefined (the whole model runs) where the graph cannot be cut or a part does not load.
 */
async function embeddingInParts(
  ort: Ort,
  runtime: RuntimeName,
  bytes: Uint8Array,
  shape: readonly (number | string)[],
): Promise<ReturnType<typeof switchingEmbedding> | undefined> {
  let parts: EmbeddingParts
  try {
    parts = embeddingParts(bytes)
  } catch {
    return undefined
  }
  const sessions: OrtSession[] = []
  const close = async () => {
    await Promise.all(sessions.map((s) => s.release()))
  }
  try {
    for (const b of parts.bytes) sessions.push(await createSession(ort, runtime, b, 'part'))
    const stages = sessions.map((s): Stage => {
      const [input = '', output = ''] = [s.inputNames[0], s.outputNames[0]]
      return async (data, dims) => {
        const out = (await s.run({ [input]: new ort.Tensor('float32', data, dims) }))[output]
        if (!out || !(out.data instanceof Float32Array)) throw new Error('a part gave no floats')
        return { data: out.data, dims: out.dims }
      }
    }) as [Stage, Stage, Stage]
    // The context only: the parts' bytes are in their sessions now, and not kept twice.
    return switchingEmbedding(
      { context: parts.context },
      stages,
      [Number(shape[1]), Number(shape[2])],
      close,
    )
  } catch {
    // A part that does not load: the whole model, as before.
  }
  await close()
  return undefined
}

function firstLine(err: unknown): string {
  return errorText(err).split('\n')[0] ?? ''
}
