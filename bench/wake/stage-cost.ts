// Where a talking room's chunk cost goes (issue 47): the mel model, the embedding model, a head,
// the JavaScript around them (copies, tensors) and the detector's own loop, each in CPU time
// (process.cpuUsage counts every thread of the process, the runtime's too) over the same chunks of
// the VAD fixtures' speech; then the service's detector paced in real time, its chain on the
// runtime's thread against the same chain run from the event loop (STAGE_PACED_S, 30). `node --import tsx bench/wake/stage-cost.ts`; prints one JSON line.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { loadRuntime } from '../../src/adapters/openwakeword/runtime.js'
import { parseWav } from '../../src/audio/wav.js'
import {
  EMBEDDING,
  MEL,
  MODEL_DIR,
  phasedDetector,
  pinnedDetector,
} from '../../test/helpers/wake.js'

const CHUNKS = Number(process.env.STAGE_CHUNKS ?? 400)
const dir = join(import.meta.dirname, '..', '..', 'fixtures', 'vad')
const talk = Buffer.concat(
  ['speech-en-us-m', 'speech-en-gb-f', 'speech-en-us-f2', 'speech-en-sc-m'].map((f) =>
    parseWav(readFileSync(join(dir, `${f}.wav`)), 16_000).pcm.subarray(32_000),
  ),
)
const samples = new Int16Array(talk.buffer, talk.byteOffset, talk.byteLength >> 1)

/** CPU ms per call of `f`, run `n` times in sequence (each awaited, as the detector does). */
async function cpuPer(n: number, f: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await f(i) // warm up
  const c = process.cpuUsage()
  for (let i = 0; i < n; i++) await f(i)
  const u = process.cpuUsage(c)
  return (u.user + u.system) / 1000 / n
}

const rt = await loadRuntime('native')
const mel = await rt.load(MEL)
const emb = await rt.load(EMBEDDING)
const head = await rt.load(join(MODEL_DIR, 'hey_jarvis_v0.1.onnx'))
const melIn = (i: number) => {
  const at = (i * 1280) % (samples.length - 1760)
  return Float32Array.from(samples.subarray(at, at + 1760))
}
const melMs = await cpuPer(CHUNKS, (i) => mel.run(melIn(i), [1, 1760]))
const window = new Float32Array(76 * 32).map((_, k) => Math.sin(k) + 2)
// The embedding on the talk's own mel frames (scaled as the detector does), its window moved on
// by `hop` chunks a run: 1 as exact scoring moves it, 2 as coarse scoring, 7 a jump (no window it
// follows: the whole model's cost). The embedding session streams a window that moves on by up to
// 4 chunks (streaming-embedding.ts).
const spec = await mel.run(Float32Array.from(samples), [1, samples.length])
for (let i = 0; i < spec.length; i++) spec[i] = (spec[i] ?? 0) / 10 + 2
const windows = Math.floor((spec.length / 32 - 76) / 8)
const moving = (hop: number) => (i: number) => {
  const at = ((i * hop) % windows) * 8 * 32
  return emb.run(spec.slice(at, at + 76 * 32), [1, 76, 32, 1])
}
const embMs = await cpuPer(CHUNKS, moving(1))
const embCoarseMs = await cpuPer(CHUNKS, moving(2))
const embJumpMs = await cpuPer(CHUNKS, moving(7))
const hw = new Float32Array(16 * 96).map((_, k) => Math.cos(k) * 0.1)
const headMs = await cpuPer(CHUNKS, () => head.run(hw.slice(), [1, 16, 96]))
// The JavaScript alone: the copies and the mel scaling a chunk makes, no model.
const jsMs = await cpuPer(CHUNKS * 10, async (i) => {
  const m = melIn(i).slice()
  for (let k = 0; k < m.length; k++) m[k] = (m[k] ?? 0) / 10 + 2
  window.slice()
  new Float32Array(16 * 96).set(hw)
})
// An empty await round trip on the pool (what a run costs beyond the model).
const loopMs = await cpuPer(CHUNKS, () => new Promise((r) => setImmediate(r)))

/** The whole detector, bulk, every chunk scored: the sum above plus its own bookkeeping. */
async function detectorMs(): Promise<{ perChunk: number; chunks: number }> {
  const d = await pinnedDetector({
    onWake: () => {},
    phrases: [
      { phrase: 'hey jarvis', file: join(MODEL_DIR, 'hey_jarvis_v0.1.onnx'), threshold: 0.5 },
    ],
  })
  const pcm = talk.subarray(0, Math.min(talk.length, CHUNKS * 2560))
  const c = process.cpuUsage()
  await d.scoreRecorded(pcm)
  const u = process.cpuUsage(c)
  const chunks = d.stats().chunksScored
  await d.close()
  return { perChunk: (u.user + u.system) / 1000 / chunks, chunks }
}
const whole = await detectorMs()

/**
 * The service's detector (hop 2, the second phase) on the talk pushed in 20 ms frames at the pace
 * of real time, CPU ms per wall second over `PACED_S`: `thread`, the chain on the runtime's thread
 * (one request per scored chunk, as the service runs), or `event loop`, the same chain run from
 * the event loop with a hand-off per model run (as before issue 47 item 1). Paced, because a
 * hand-off costs most when both threads sleep between chunks.
 */
const PACED_S = Number(process.env.STAGE_PACED_S ?? 30)
/** Messages posted to the runtime's thread: each a hand-off there, and its reply one back. */
let posts = 0
const post = Worker.prototype.postMessage
Worker.prototype.postMessage = function (this: Worker, ...args: Parameters<Worker['postMessage']>) {
  posts++
  return post.apply(this, args)
}
const requests: Record<string, number[]> = { thread: [], 'event loop': [] }
async function pacedMs(where: 'thread' | 'event loop'): Promise<number> {
  const hop = { coarseHop: 2, onWake: () => {} }
  const d =
    where === 'thread'
      ? await pinnedDetector({
          ...hop,
          phrases: [
            { phrase: 'hey jarvis', file: join(MODEL_DIR, 'hey_jarvis_v0.1.onnx'), threshold: 0.5 },
          ],
        })
      : await phasedDetector({ ...hop, threshold: 0.5 })
  const frames = Math.min(PACED_S * 50, Math.floor(talk.length / 640))
  const t0 = performance.now()
  const c = process.cpuUsage()
  const posted = posts
  for (let f = 0; f < frames; f++) {
    d.push(talk.subarray(f * 640, (f + 1) * 640), (f + 1) * 20)
    const due = t0 + (f + 1) * 20 - performance.now()
    if (due > 0) await new Promise((r) => setTimeout(r, due))
  }
  await d.settled()
  const u = process.cpuUsage(c)
  const wall = performance.now() - t0
  requests[where]?.push(Number(((posts - posted) / (frames / 4)).toFixed(2)))
  await d.close()
  return (u.user + u.system) / wall
}
const paced: Record<string, number[]> = { thread: [], 'event loop': [] }
// Alternating, twice each, so the machine's load falls on both alike.
for (let i = 0; i < 2; i++) {
  for (const where of ['event loop', 'thread'] as const) paced[where]?.push(await pacedMs(where))
}
const r = (x: number) => Number(x.toFixed(3))
process.stdout.write(
  `${JSON.stringify({
    at: new Date().toISOString(),
    load: (await import('node:os')).loadavg().map((x) => r(x)),
    cpuMsPerChunk: {
      mel: r(melMs),
      embedding: r(embMs),
      embeddingHop2: r(embCoarseMs),
      embeddingWhole: r(embJumpMs),
      head: r(headMs),
      jsCopies: r(jsMs / 10),
      poolRoundTrip: r(loopMs),
      detectorWhole: r(whole.perChunk),
    },
    pacedCpuMsPerS: Object.fromEntries(Object.entries(paced).map(([k, v]) => [k, v.map(r)])),
    pacedSeconds: PACED_S,
    pacedRequestsPerChunk: requests,
    chunks: CHUNKS,
    wholeChunks: whole.chunks,
    wallMs: Math.round(performance.now()),
  })}\n`,
)
await Promise.all([mel.close(), emb.close(), head.close()])
