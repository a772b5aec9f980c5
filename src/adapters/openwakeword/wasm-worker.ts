import { parentPort } from 'node:worker_threads'
import { NocturnError } from '../../core/errors.js'
import type { ModelSession } from './model-session.js'
import { importWasm, loadSession } from './runtime.js'
import type { WasmReply, WasmRequest } from './wasm-thread.js'

/**
 * The WASM runtime's own thread (started by wasm-thread.ts): onnxruntime-web runs each model
 * synchronously on the thread that calls it, so here it holds this thread, never the one that
 * carries the audio. Sessions are kept by number; every request gets one reply with its id.
 */
const port = parentPort
if (!port) throw new Error('wasm-worker.ts runs only as a worker thread')
const ort = importWasm()
// A failed import is answered to every load (its message names the fix), not left unhandled.
ort.catch(() => {})
const sessions = new Map<number, ModelSession>()
let next = 0

port.on('message', (m: WasmRequest) => {
  void answer(m).then((r) => port.postMessage(r))
})

async function answer(m: WasmRequest): Promise<WasmReply> {
  try {
    if (m.type === 'load') {
      const s = await loadSession(await ort, 'wasm', m.file)
      const session = next++
      sessions.set(session, s)
      return { id: m.id, ok: true, session, inputName: s.inputName, inputShape: s.inputShape }
    }
    const s = sessions.get(m.session)
    if (!s) throw new Error(`no session ${m.session}`)
    if (m.type === 'run') return { id: m.id, ok: true, output: await s.run(m.input, m.dims) }
    sessions.delete(m.session)
    await s.close()
    return { id: m.id, ok: true }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    return err instanceof NocturnError
      ? { id: m.id, ok: false, code: err.code, message }
      : { id: m.id, ok: false, message }
  }
}
