// Where the chain's CPU goes in a talking room (issue 47): the service's chain (hey_jarvis at 0.5,
// hop 2, the 40 ms phase) run in process on the native runtime over the talking room's audio
// (bench/wake/room-audio.ts, the budget bench's, looped), every chunk heard, each model run counted
// and timed in CPU — the mel model, the streamed embedding's three parts, the head — and the rest
// (the chain's JavaScript, copies, awaits) as the difference. STAGES_PACED=1: each request waits
// for its last chunk's audio, as the service's do (a run after a sleep costs more than one hot);
// STAGES_BATCH: chunks a request carries while coarse (the detector's: 4); STAGES_EXACT_BATCH:
// while exact (1: a detector keeping up; the detector sends up to 4 when behind); STAGES_SECONDS (120).
// `node --import tsx bench/wake/chain-stages.ts`; prints one JSON line.

import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { ScoringChain } from '../../src/adapters/openwakeword/chain.js'
import { FeaturePipeline, noisePrefill } from '../../src/adapters/openwakeword/features.js'
import type { ModelSession } from '../../src/adapters/openwakeword/model-session.js'
import { importNative, loadRuntime } from '../../src/adapters/openwakeword/runtime.js'
import {
  embeddingParts,
  type Stage,
  streamingEmbedding,
} from '../../src/adapters/openwakeword/streaming-embedding.js'
import { EMBEDDING, MEL, MODEL_DIR, wavPcm } from '../../test/helpers/wake.js'
import { roomAudio } from './room-audio.js'

const SECONDS = Number(process.env.STAGES_SECONDS ?? 120)
const HOP = Number(process.env.STAGES_HOP ?? 2)
/** Paced: each request waits until its last chunk's audio would have arrived, as the service's. */
const PACED = process.env.STAGES_PACED === '1'
/** Chunks a request carries while exact: the detector's cap on chunks already waiting (4); 1 as before. */
const EXACT_BATCH = Number(process.env.STAGES_EXACT_BATCH ?? 1)

interface Tally {
  runs: number
  ms: number
}
const tallies: Record<string, Tally> = {}
function timed(name: string, s: ModelSession): ModelSession {
  const t: Tally = { runs: 0, ms: 0 }
  tallies[name] = t
  return {
    file: s.file,
    inputName: s.inputName,
    inputShape: s.inputShape,
    close: () => s.close(),
    async run(input, dims) {
      const c = process.cpuUsage()
      const out = await s.run(input, dims)
      const u = process.cpuUsage(c)
      t.runs++
      t.ms += (u.user + u.system) / 1000
      return out
    },
  }
}

/** The streamed embedding on the three parts, each its own session here, each part timed. */
async function timedEmbedding(): Promise<ModelSession> {
  const ort = await importNative()
  const parts = embeddingParts(readFileSync(EMBEDDING))
  const stages = await Promise.all(
    parts.bytes.map(async (bytes, i): Promise<Stage> => {
      const s = await ort.InferenceSession.create(bytes, {
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        enableMemPattern: false,
      })
      const t: Tally = { runs: 0, ms: 0 }
      tallies[`embedding part ${i + 1}`] = t
      const [input = '', output = ''] = [s.inputNames[0], s.outputNames[0]]
      return async (data, dims) => {
        const c = process.cpuUsage()
        const out = (await s.run({ [input]: new ort.Tensor('float32', data, dims) }))[output]
        const u = process.cpuUsage(c)
        t.runs++
        t.ms += (u.user + u.system) / 1000
        return { data: out?.data as Float32Array, dims: out?.dims ?? [] }
      }
    }),
  )
  const run = streamingEmbedding(parts, stages as [Stage, Stage, Stage])
  const shape = { file: EMBEDDING, inputName: 'input_1', inputShape: [1, 76, 32, 1] }
  return { ...shape, run, close: async () => {} }
}

const rt = await loadRuntime('native')
const melS = await rt.load(MEL)
const embS = await rt.load(EMBEDDING)
const headS = await rt.load(join(MODEL_DIR, 'hey_jarvis_v0.1.onnx'))
const prefill = await noisePrefill(melS, embS, 18)
const mel = timed('mel', melS)
const emb = timed('embedding', await timedEmbedding())
const head = timed('head', headS)
const chain = new ScoringChain({
  features: FeaturePipeline.create(mel, emb, prefill),
  heads: [{ phrase: 'hey jarvis', model: head, threshold: 0.5 }],
  consecutive: 2,
  refractoryMs: 2000,
  coarseHop: HOP,
})
// STAGES_ROOM=wake: the wake fixtures' clips in a row instead (near a threshold: the second phase).
const room =
  process.env.STAGES_ROOM === 'wake'
    ? Buffer.concat(
        readdirSync(join(import.meta.dirname, '..', '..', 'fixtures', 'wake'))
          .filter((f) => f.endsWith('.wav'))
          .map((f) => wavPcm(join(import.meta.dirname, '..', '..', 'fixtures', 'wake', f))),
      )
    : roomAudio('talk')
const pcm = new Int16Array(room.buffer, room.byteOffset, room.byteLength >> 1)
const chunks = Math.floor((SECONDS * 16_000) / 1280)
let quiet = 0
let coarse = 0
let offsetScores = 0
let wakes = 0
let requests = 0
let exact = false
const c0 = process.cpuUsage()
const t0 = performance.now()
for (let k = 0; k < chunks; ) {
  const n = exact ? EXACT_BATCH : Number(process.env.STAGES_BATCH ?? 2 * HOP)
  const ask = []
  for (let j = 0; j < n && k < chunks; j++, k++) {
    const at = (k * 1280) % (pcm.length - 1280)
    ask.push({ chunk: pcm.slice(at, at + 1280), heard: true, endAt: (k + 1) * 80, arrivedAt: 0 })
  }
  if (PACED) {
    const due = t0 + k * 80 - performance.now()
    if (due > 0) await new Promise((r) => setTimeout(r, due))
  }
  const r = await chain.score({ reset: false, thresholds: [0.5], chunks: ask })
  requests++
  quiet += r.quiet
  coarse += r.coarse
  offsetScores += r.offsetScores
  wakes += r.events.filter((e) => e.kind === 'wake').length
  exact = r.exact
}
const u = process.cpuUsage(c0)
const audioS = (chunks * 1280) / 16_000
const r3 = (x: number) => Number(x.toFixed(3))
process.stdout.write(
  `${JSON.stringify({
    at: new Date().toISOString(),
    load: (await import('node:os')).loadavg().map(r3),
    hop: HOP,
    exactBatch: EXACT_BATCH,
    audioS,
    chunks,
    requests,
    coarse,
    quiet,
    offsetScores,
    wakes,
    room: process.env.STAGES_ROOM ?? 'talk',
    cpuMsPerS: r3((u.user + u.system) / 1000 / audioS),
    perStage: Object.fromEntries(
      Object.entries(tallies).map(([k, t]) => [
        k,
        { runsPerS: r3(t.runs / audioS), msPerS: r3(t.ms / audioS), msPerRun: r3(t.ms / t.runs) },
      ]),
    ),
  })}\n`,
)
