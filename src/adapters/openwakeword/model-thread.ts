import { Worker } from 'node:worker_threads'
import { type ErrorCode, NocturnError } from '../../core/errors.js'
import type { ChainAsk, ChainHead, ChainResult, ChunkChain } from './chain.js'
import type { InferenceRuntime, ModelSession, RuntimeName } from './model-session.js'
import { type ChainSpec, sameSnapshot, snapshotOf, type VerifierSnapshot } from './remote-chain.js'
import type { EmbeddingMode } from './streaming-embedding.js'

type ModelAsk =
  | { readonly type: 'load'; readonly file: string }
  | {
      readonly type: 'run'
      readonly session: number
      readonly input: Float32Array
      readonly dims: readonly number[]
    }
  | {
      readonly type: 'prefill'
      readonly mel: number
      readonly embedding: number
      readonly reach: number
    }
  | { readonly type: 'chain'; readonly spec: ChainSpec }
  | {
      readonly type: 'score'
      readonly chain: number
      readonly ask: ChainAsk
      /** Every phrase's verifier, when one changed since the last request (a lesson). */
      readonly verifiers?: readonly (VerifierSnapshot | undefined)[]
    }
  | { readonly type: 'dropChain'; readonly chain: number }
  | { readonly type: 'close'; readonly session: number }
  /** The embedding model's streamed run, made and checked once listening has started. */
  | { readonly type: 'stream'; readonly session: number }
  | { readonly type: 'background' }

/** What the main thread asks of the runtime's thread (model-worker.ts). */
export type ModelRequest = ModelAsk & { readonly id: number }

/** Its answer: one per request, with the request's id. */
export type ModelReply =
  | {
      readonly id: number
      readonly ok: true
      readonly session?: number
      readonly inputName?: string
      readonly inputShape?: readonly (number | string)[]
      readonly streamed?: boolean
      readonly mode?: EmbeddingMode
      readonly output?: Float32Array
      readonly chain?: number
      readonly result?: ChainResult
    }
  | { readonly id: number; readonly ok: false; readonly code?: ErrorCode; readonly message: string }

/**
 * Both runtimes run a model on the calling thread, synchronously, for the whole inference:
 * onnxruntime-web by design, and onnxruntime-node too (its `run` and its session creation are a
 * synchronous native call inside a `setImmediate`, not work on libuv's pool). On the main thread
 * that holds the event loop (the microphone, the speaker, the button, the network) for every
 * model run — inside a CPU quota a run that is 2 ms of CPU can take a whole quota period of wall
 * time. So every model runs on a worker thread of its own, at the lowest priority
 * (model-worker.ts): every session here is a proxy whose `run` posts the input and resolves with
 * the scores, and when the process's CPU share runs short the kernel gives it to the event loop
 * first. The worker holds the event loop open only while a request is outstanding, and ends when
 * its last session is closed.
 */
/**
 * The thread's V8 heap holds little (the runtime's tensors live outside it): a small young
 * generation keeps its resident memory down (docs/wake-word.md, "Memory").
 */
const resourceLimits = { maxYoungGenerationSizeMb: 4 }

/** The scoring chain's options, on sessions this runtime loaded. */
interface ThreadChainOptions {
  readonly mel: ModelSession
  readonly embedding: ModelSession
  readonly heads: readonly ChainHead[]
  /** How far back the noise prefill reaches (`noisePrefill`). */
  readonly reach: number
  readonly consecutive: number
  readonly refractoryMs: number
  readonly coarseHop: number | undefined
}

/** A runtime on its own thread: the scoring chain can live there too (chain.ts). */
export interface ThreadRuntime extends InferenceRuntime {
  /** The chain on the runtime's thread: each request is one hand-off, whatever it runs. */
  chain(o: ThreadChainOptions): Promise<ChunkChain>
}

export function modelThreadRuntime(name: RuntimeName): ThreadRuntime {
  let worker: Worker | undefined
  let failed: Error | undefined
  let nextId = 0
  let open = 0
  const pending = new Map<number, { resolve(r: ModelReply): void; reject(e: Error): void }>()
  /** Each session's number on the thread, for a request naming several (`prefill`). */
  const numbers = new WeakMap<ModelSession, number>()

  const start = (): Worker => {
    const w = import.meta.url.endsWith('.ts')
      ? // Under tsx (development, tests, benchmarks) the worker is this folder's .ts file: it
        // registers tsx's loader first (a worker does not inherit the parent's hooks). Neither
        // takes the parent's command-line options (`--import tsx` would start a second loader
        // thread for it).
        new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((t) => { t.register(); return import(${JSON.stringify(new URL('./model-worker.ts', import.meta.url).href)}) })`,
          { eval: true, workerData: name, resourceLimits, execArgv: [] },
        )
      : new Worker(new URL('./model-worker.js', import.meta.url), {
          workerData: name,
          resourceLimits,
          execArgv: [],
        })
    w.unref()
    w.on('message', (r: ModelReply) => {
      const p = pending.get(r.id)
      pending.delete(r.id)
      if (pending.size === 0) w.unref()
      p?.resolve(r)
    })
    const fail = (err: Error) => {
      failed = new NocturnError(
        'NOC_ERR_WAKE_RUNTIME',
        `the ${name} wake-word runtime's thread stopped (${err.message}); restart Nocturn`,
        { cause: err },
      )
      for (const p of pending.values()) p.reject(failed)
      pending.clear()
      worker = undefined
    }
    w.on('error', fail)
    w.on('exit', (code) => {
      if (worker === w) fail(new Error(`exit code ${code}`))
    })
    return w
  }

  const ask = (req: ModelAsk, transfer: ArrayBuffer[] = []) =>
    new Promise<ModelReply & { ok: true }>((resolve, reject) => {
      if (failed) return reject(failed)
      worker ??= start()
      const id = nextId++
      pending.set(id, {
        resolve: (r) =>
          r.ok
            ? resolve(r)
            : reject(r.code ? new NocturnError(r.code, r.message) : new Error(r.message)),
        reject,
      })
      worker.ref()
      worker.postMessage({ ...req, id }, transfer)
    })

  // Not while a request is under way: several models load at once, and ending the thread inside
  // the runtime's session creation aborts the process.
  const stopIfUnused = async () => {
    if (open > 0 || pending.size > 0 || !worker) return
    const w = worker
    worker = undefined
    await w.terminate()
  }

  const number = (m: ModelSession) => {
    const n = numbers.get(m)
    if (n === undefined) throw new Error(`${m.file} was not loaded by this runtime`)
    return n
  }

  return {
    name,
    async chain(o) {
      const spec: ChainSpec = {
        mel: number(o.mel),
        embedding: number(o.embedding),
        heads: o.heads.map((h) => ({
          session: number(h.model),
          phrase: h.phrase,
          threshold: h.threshold,
          verifier: snapshotOf(h.verifier),
          companion: h.companion,
        })),
        reach: o.reach,
        consecutive: o.consecutive,
        refractoryMs: o.refractoryMs,
        coarseHop: o.coarseHop,
      }
      const chain = (await ask({ type: 'chain', spec })).chain ?? -1
      let sent = spec.heads.map((h) => h.verifier)
      let dropped = false
      return {
        async score(a) {
          // A household's lesson swaps its verifier's model: the thread scores with the new one
          // from this request on.
          const changed = o.heads.some((h, i) => !sameSnapshot(sent[i], h.verifier))
          if (changed) sent = o.heads.map((h) => snapshotOf(h.verifier))
          const chunks = a.chunks.map((c) => c.chunk.buffer as ArrayBuffer)
          const r = await ask(
            { type: 'score', chain, ask: a, ...(changed ? { verifiers: sent } : {}) },
            chunks,
          )
          if (!r.result) throw new Error("the runtime's thread gave no scores")
          return r.result
        },
        async close() {
          if (dropped) return
          dropped = true
          await ask({ type: 'dropChain', chain }).catch(() => {})
        },
      }
    },
    background() {
      void ask({ type: 'background' }).catch(() => {})
    },
    async prefill(mel, embedding, reach) {
      const r = await ask({
        type: 'prefill',
        mel: number(mel),
        embedding: number(embedding),
        reach,
      })
      return r.output ?? new Float32Array(0)
    },
    async load(file): Promise<ModelSession> {
      const r = await ask({ type: 'load', file }).catch(async (err: unknown) => {
        await stopIfUnused()
        throw err
      })
      const session = r.session ?? -1
      open++
      let closed = false
      let streamed = r.streamed === true
      const proxy: ModelSession = {
        file,
        inputName: r.inputName ?? '',
        inputShape: r.inputShape ?? [],
        get streamed() {
          return streamed
        },
        async stream() {
          const mode = (await ask({ type: 'stream', session })).mode ?? 'whole'
          streamed = mode === 'streamed'
          return mode
        },
        async run(input, dims) {
          const out = await ask({ type: 'run', session, input, dims })
          return out.output ?? new Float32Array(0)
        },
        async close() {
          if (closed) return
          closed = true
          await ask({ type: 'close', session }).catch(() => {})
          open--
          await stopIfUnused()
        },
      }
      numbers.set(proxy, session)
      return proxy
    },
  }
}
