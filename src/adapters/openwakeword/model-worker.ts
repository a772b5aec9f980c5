import { readlinkSync } from 'node:fs'
import { getPriority, setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { NocturnError } from '../../core/errors.js'
import { noisePrefill } from './features.js'
import type { ModelSession, RuntimeName } from './model-session.js'
import type { ModelReply, ModelRequest } from './model-thread.js'
import { type ThreadChain, threadChain } from './remote-chain.js'
import { importNative, importWasm, loadSession } from './runtime.js'

/**
 * The runtime's own thread (started by model-thread.ts): both runtimes run each model
 * synchronously on the thread that calls it, so here it holds this thread, never the one that
 * carries the audio and the button. Sessions are kept by number; every request gets one reply
 * with its id.
 */
const port = parentPort
if (!port) throw new Error('model-worker.ts runs only as a worker thread')
const runtime = workerData as RuntimeName
/**
 * Scoring is best-effort and the audio path comes first: once every model is loaded (`background`:
 * the load itself keeps the process's priority, not to slow a start), this thread runs 5 nice
 * levels below the process (a third of its weight), so inside a CPU quota (or on a busy single core) the kernel
 * gives the process's share to the event loop first and scoring gets what is left (the detector
 * then sheds load, detector.ts). Not the lowest level: scoring should not give way to every other
 * program on the board.
 */
const NICER_BY = 5
const NICEST = 19
const ort = runtime === 'wasm' ? importWasm() : importNative()
// A failed import is answered to every load (its message names the fix), not left unhandled.
ort.catch(() => {})
const sessions = new Map<number, ModelSession>()
/** Scoring chains (chain.ts) on these sessions, by number: each once its prefill is made. */
const chains = new Map<number, Promise<ThreadChain>>()
let next = 0
/**
 * What every request waits for before it runs: the prefill of the chain answered last. A chain is
 * answered once both models are checked (remote-chain.ts), so the start listens while the thread
 * makes the rest of the prefill; the first chunk's score, and every other request (a session's
 * close, the embedding's streamed check), comes after it, as it did when the answer waited.
 */
let behind: Promise<unknown> = Promise.resolve()

port.on('message', (m: ModelRequest) => {
  void answer(m).then((r) => port.postMessage(r))
})

async function answer(m: ModelRequest): Promise<ModelReply> {
  await behind
  try {
    if (m.type === 'background') {
      lowerThisThread()
      return { id: m.id, ok: true }
    }
    if (m.type === 'load') {
      const s = await loadSession(await ort, runtime, m.file)
      const session = next++
      sessions.set(session, s)
      const { inputName, inputShape, streamed } = s
      return { id: m.id, ok: true, session, inputName, inputShape, streamed: streamed === true }
    }
    if (m.type === 'chain') {
      const chain = next++
      const { ready } = await threadChain(m.spec, sessionOf)
      chains.set(chain, ready)
      // A failure of the rest is the first score's to answer; nothing waits on it otherwise.
      behind = ready.catch(() => {})
      return { id: m.id, ok: true, chain }
    }
    if (m.type === 'score') {
      const c = await chains.get(m.chain)
      if (!c) throw new Error(`no chain ${m.chain}`)
      if (m.verifiers) c.update(m.verifiers)
      return { id: m.id, ok: true, result: await c.chain.score(m.ask) }
    }
    if (m.type === 'dropChain') {
      chains.delete(m.chain)
      return { id: m.id, ok: true }
    }
    if (m.type === 'stream') {
      const s = sessionOf(m.session)
      return { id: m.id, ok: true, mode: s.stream ? await s.stream() : 'whole' }
    }
    if (m.type === 'prefill') {
      const output = await noisePrefill(sessionOf(m.mel), sessionOf(m.embedding), m.reach)
      return { id: m.id, ok: true, output }
    }
    const s = sessionOf(m.session)
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

function sessionOf(n: number): ModelSession {
  const s = sessions.get(n)
  if (!s) throw new Error(`no session ${n}`)
  return s
}

/**
 * Linux's setpriority takes a thread's id for that one thread (`/proc/thread-self` names it); the
 * process's own threads keep theirs. Elsewhere, or where it is refused, the thread keeps the
 * process's priority: scoring still sheds load by dropping the oldest audio, and by resting while a
 * session is under way (detector.ts, BUSY_MS).
 */
function lowerThisThread(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0)
      setPriority(tid, Math.min(NICEST, getPriority(tid) + NICER_BY))
  } catch {
    // Not Linux, or not allowed: see above.
  }
}
