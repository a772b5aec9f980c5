import { Worker } from 'node:worker_threads'
import { type ErrorCode, NocturnError } from '../../core/errors.js'
import type { InferenceRuntime, ModelSession } from './model-session.js'

type WasmAsk =
  | { readonly type: 'load'; readonly file: string }
  | {
      readonly type: 'run'
      readonly session: number
      readonly input: Float32Array
      readonly dims: readonly number[]
    }
  | { readonly type: 'close'; readonly session: number }

/** What the main thread asks of the WASM runtime's thread (wasm-worker.ts). */
export type WasmRequest = WasmAsk & { readonly id: number }

/** Its answer: one per request, with the request's id. */
export type WasmReply =
  | {
      readonly id: number
      readonly ok: true
      readonly session?: number
      readonly inputName?: string
      readonly inputShape?: readonly (number | string)[]
      readonly output?: Float32Array
    }
  | { readonly id: number; readonly ok: false; readonly code?: ErrorCode; readonly message: string }

/**
 * onnxruntime-web in Node runs a model on the calling thread, synchronously, for the whole
 * inference: on the main thread it would hold the event loop (the microphone, the speaker, the
 * network) for every chunk, about 8 ms on this machine and several times that on an armv7 board,
 * where WASM is the only runtime. So it runs on a worker thread of its own, and every session here
 * is a proxy: `run` posts the input and resolves with the scores. The worker holds the event loop
 * open only while a request is outstanding, and ends when its last session is closed.
 */
export function wasmThreadRuntime(): InferenceRuntime {
  let worker: Worker | undefined
  let failed: Error | undefined
  let nextId = 0
  let open = 0
  const pending = new Map<number, { resolve(r: WasmReply): void; reject(e: Error): void }>()

  const start = (): Worker => {
    const w = import.meta.url.endsWith('.ts')
      ? // Under tsx (development, tests, benchmarks) the worker is this folder's .ts file: it
        // registers tsx's loader first (a worker does not inherit the parent's).
        new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((t) => { t.register(); return import(${JSON.stringify(new URL('./wasm-worker.ts', import.meta.url).href)}) })`,
          { eval: true },
        )
      : new Worker(new URL('./wasm-worker.js', import.meta.url))
    w.unref()
    w.on('message', (r: WasmReply) => {
      const p = pending.get(r.id)
      pending.delete(r.id)
      if (pending.size === 0) w.unref()
      p?.resolve(r)
    })
    const fail = (err: Error) => {
      failed = new NocturnError(
        'NOC_ERR_WAKE_RUNTIME',
        `the WASM wake-word runtime's thread stopped (${err.message}); restart Nocturn`,
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

  const ask = (req: WasmAsk) =>
    new Promise<WasmReply & { ok: true }>((resolve, reject) => {
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
      worker.postMessage({ ...req, id })
    })

  const stopIfUnused = async () => {
    if (open > 0 || !worker) return
    const w = worker
    worker = undefined
    await w.terminate()
  }

  return {
    name: 'wasm',
    async load(file): Promise<ModelSession> {
      const r = await ask({ type: 'load', file }).catch(async (err: unknown) => {
        await stopIfUnused()
        throw err
      })
      const session = r.session ?? -1
      open++
      let closed = false
      return {
        file,
        inputName: r.inputName ?? '',
        inputShape: r.inputShape ?? [],
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
    },
  }
}
