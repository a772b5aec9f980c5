// A synthesized pause (issue 46; `BENCH_ONLY=pause npm run bench -- wake-holdout`): "hey jarvis"
// and a command in one breath is missed far more than with a pause between. Near a threshold,
// also score "as if the speaker had paused": the mel frames of the last k chunks replaced by the
// room's quietest recent chunks, the k embeddings holding them made again (wake/synth-pause.ts),
// the head on that window. Each k counts its own run of two chunks (never mixing k's, nor with
// the real scores). Knobs: WAKE_PAUSE_KS (default 1–8), WAKE_PAUSE_FLOOR (the quietest chunks taken
// in turn, default 6), WAKE_PAUSE_SHARE (the gate, default 0.1), WAKE_PAUSE_THRESHOLD (a pause's
// wake, default 0.5), WAKE_PAUSE_PART=missed|false, WAKE_PAUSE_SETS, WAKE_PAUSE_CONDITIONS,
// WAKE_PAUSE_DEBUG=1 (each missed clip's best scores), WAKE_PAUSE_ROLL=point (the local check's
// pre-roll up to the pause point, not the wake).
// Method: the real detector as the service runs it (coarse hop, the 40 ms phase) gives the wakes
// "without"; a second detector scoring every chunk exactly (no further phase) hands over, through
// a session wrapped around its embedding model, every chunk's 76 mel frames and embedding and every
// exact score: the pause's windows are made from those with the same embedding and head sessions.
// A pause is scored while the exact score is at a tenth of the threshold (4 chunks after, as the
// second phase). Wakes: HOLDOUT and TUNING voices (holdout.ts), one breath and after a 0.5 s pause,
// clean and at 10 dB of pink noise and of babble. False wakes: the near-miss television stream
// (holdout voices) and the ordinary non-wake speech of BENCH_ONLY=false (corpus.ts, 8 voices).
import { Heads } from '../../src/adapters/openwakeword/heads.js'
import type {
  InferenceRuntime,
  ModelSession,
} from '../../src/adapters/openwakeword/model-session.js'
import { loadRuntime } from '../../src/adapters/openwakeword/runtime.js'
import { COARSE_HOP } from '../../src/app/wake-detector.js'
import { DEFAULT_WAKE_PRE_ROLL_MS } from '../../src/audio/wake-onset.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { EMBEDDING, HEADS, phasedDetector } from '../../test/helpers/wake.js'
import {
  bytes,
  concat,
  mixUnder,
  noiseConditions,
  nonWakeStream,
  type Spoken,
  utterance,
  type Voice,
  voices,
} from './corpus.js'
import { COMMANDS, holdoutVoices, spokenStream, TV, tuningVoices } from './holdout.js'
import { pausedHeadWindow, pausedWindows, quietestChunks } from './synth-pause.js'

const RATE = 16_000
const THRESHOLD = 0.5
const CONSECUTIVE = 2
const CHUNK_MS = 80
const REFRACTORY_MS = 2000
/** Pause lengths tried, in chunks (contiguous from 1: the pause point's runs read them in turn). */
const KS = (process.env.WAKE_PAUSE_KS ?? '1,2,3,4,5,6,7,8').split(',').map(Number)
/** A pause is scored from an exact score at this share of the threshold, and TAIL chunks after. */
const SHARE = Number(process.env.WAKE_PAUSE_SHARE ?? 0.1)
const TAIL = 4
/** The score a pause's window must reach (WAKE_PAUSE_THRESHOLD; default the head's own). */
const PAUSE_THRESHOLD = Number(process.env.WAKE_PAUSE_THRESHOLD ?? THRESHOLD)
/** Chunks whose frames the room's floor is chosen from (~13 s, what the pipeline keeps). */
const FLOOR_CHUNKS = 160
/** How many of the quietest chunks the pause is made of, in turn (WAKE_PAUSE_FLOOR). */
const FLOOR_N = Number(process.env.WAKE_PAUSE_FLOOR ?? 6)
const FRAME_VALUES = 76 * 32
const CHUNK_VALUES = 8 * 32

/** What the exact detector saw, per chunk since its reset: mel window, embedding, score. */
interface Seen {
  windows: Float32Array[]
  embeddings: Float32Array[]
  scores: number[]
  ends: number[]
}

interface Rig {
  service: Awaited<ReturnType<typeof phasedDetector>>
  exact: Awaited<ReturnType<typeof phasedDetector>>
  serviceWakes: WakeDetection[]
  seen: Seen
  prefill: Float32Array[]
  embedding: ModelSession
  heads: Heads
  pauseCpuMs: number
  serviceCpuMs: number
  pauseEmbeddings: number
  /** The embeddings pauses of at most 3 chunks would have made (the brief's k = 1..3). */
  pauseEmbeddings3: number
}

/** The runtime, its embedding sessions handing over every window and embedding they make. */
function recording(
  rt: InferenceRuntime,
  sink: { on: boolean; seen: Seen; prefill: Float32Array[] },
) {
  const sessions: ModelSession[] = []
  const runtime: InferenceRuntime = {
    name: rt.name,
    load: async (file) => {
      const s = await rt.load(file)
      if (file !== EMBEDDING) return s
      sessions.push(s)
      return {
        file: s.file,
        inputName: s.inputName,
        inputShape: s.inputShape,
        run: async (input, dims) => {
          const window = input.slice()
          const e = await s.run(input, dims)
          if (sink.on) {
            sink.seen.windows.push(window)
            sink.seen.embeddings.push(e.slice())
          } else sink.prefill.push(e.slice())
          return e
        },
        close: () => s.close(),
      }
    },
  }
  return { runtime, sessions }
}

async function rig(): Promise<Rig> {
  const rt = await loadRuntime('native')
  const serviceWakes: WakeDetection[] = []
  const seen: Seen = { windows: [], embeddings: [], scores: [], ends: [] }
  const sink = { on: false, seen, prefill: [] as Float32Array[] }
  const { runtime } = recording(rt, sink)
  const service = await phasedDetector({
    onWake: (w) => serviceWakes.push(w),
    threshold: THRESHOLD,
    coarseHop: COARSE_HOP,
  })
  const exact = await phasedDetector({
    onWake: () => {},
    onScores: (s, at) => {
      seen.scores.push(s[0] ?? 0)
      seen.ends.push(at)
    },
    threshold: THRESHOLD,
    coarseHop: 1,
    offsetPhase: false,
    runtime,
  })
  sink.on = true
  const head = HEADS[0]
  if (!head) throw new Error('no head')
  const embedding = await rt.load(EMBEDDING)
  const heads = new Heads([{ model: await rt.load(head.file) }], () => 1)
  return {
    service,
    exact,
    serviceWakes,
    seen,
    prefill: sink.prefill,
    embedding,
    heads,
    pauseCpuMs: 0,
    serviceCpuMs: 0,
    pauseEmbeddings: 0,
    pauseEmbeddings3: 0,
  }
}

/** A variant's wake times (capture ms) per k, and per "pause point" (k = 1, 2, 3 of one pause). */
interface PauseWakes {
  byK: number[][]
  point: number[]
  /** The best real exact score and, per k, the best pause score: for WAKE_PAUSE_DEBUG. */
  best: number[]
}

/**
 * Scores `pcm` with both detectors, then the synthesized pauses from what the exact one saw.
 * Resolves with the service's wakes and the pauses' wakes.
 */
async function scoreWithPauses(
  r: Rig,
  pcm: Int16Array,
  startMs: number,
): Promise<{ service: number[]; pause: PauseWakes; endMs: number }> {
  r.service.reset()
  r.exact.reset()
  r.serviceWakes.length = 0
  const s = r.seen
  s.windows = []
  s.embeddings = []
  s.scores = []
  s.ends = []
  const s0 = process.cpuUsage()
  await r.service.scoreRecorded(bytes(pcm), startMs)
  const s1 = process.cpuUsage(s0)
  r.serviceCpuMs += (s1.user + s1.system) / 1000
  const endMs = await r.exact.scoreRecorded(bytes(pcm), startMs)
  if (s.windows.length !== s.scores.length) {
    throw new Error(`pause bench: ${s.windows.length} windows for ${s.scores.length} scores`)
  }
  const c0 = process.cpuUsage()
  const pause = await pauses(r)
  const used = process.cpuUsage(c0)
  r.pauseCpuMs += (used.user + used.system) / 1000
  return { service: r.serviceWakes.map((w) => w.heardAtMs), pause, endMs }
}

/** Score S(c, j): a pause after chunk c, at chunk c + j. Made on demand, kept per clip. */
async function pauses(r: Rig): Promise<PauseWakes> {
  const s = r.seen
  const n = s.scores.length
  const made = new Map<number, Float32Array[]>()
  const scored = new Map<string, number>()
  const allEmbeddings = [...r.prefill, ...s.embeddings]
  const offset = r.prefill.length
  /** The pause after chunk c (0-based), its embeddings for j = 1..upTo. */
  const pauseEmbeddings = async (c: number, upTo: number): Promise<Float32Array[]> => {
    const have = made.get(c) ?? []
    if (have.length >= upTo) return have
    // The real frames up to chunk c: its window; the floor from the chunks before.
    const frames = s.windows[c] as Float32Array
    const floorFrom = Math.max(0, c - FLOOR_CHUNKS + 1)
    const recent = new Float32Array((c - floorFrom + 1) * CHUNK_VALUES)
    for (let t = floorFrom; t <= c; t++) {
      recent.set(
        (s.windows[t] as Float32Array).subarray(FRAME_VALUES - CHUNK_VALUES),
        (t - floorFrom) * CHUNK_VALUES,
      )
    }
    const quiet = quietestChunks(recent, FLOOR_N)
    const windows = pausedWindows(frames, quiet, upTo)
    for (let j = have.length; j < upTo; j++) {
      have.push(await r.embedding.run(windows[j] as Float32Array, [1, 76, 32, 1]))
      r.pauseEmbeddings++
    }
    made.set(c, have)
    return have
  }
  const score = async (c: number, j: number): Promise<number> => {
    const key = `${c}:${j}`
    const got = scored.get(key)
    if (got !== undefined) return got
    const ps = await pauseEmbeddings(c, j)
    const realEnd = offset + c + 1
    const real = concat32(allEmbeddings.slice(Math.max(0, realEnd - 16), realEnd))
    const [v] = await r.heads.run(pausedHeadWindow(real, ps.slice(0, j), 16), false)
    scored.set(key, v ?? 0)
    return v ?? 0
  }
  const runs = KS.map(() => 0)
  const byK: number[][] = KS.map(() => [])
  let left = 0
  for (let t = 0; t < n; t++) {
    const near = (s.scores[t] ?? 0) >= SHARE * THRESHOLD
    left = near ? TAIL + 1 : left - 1
    if (left <= 0) {
      runs.fill(0)
      continue
    }
    for (const [i, k] of KS.entries()) {
      const c = t - k
      // Upstream's first 5 scores are 0, and a pause needs 68 real frames before it.
      if (c < 5) continue
      const v = await score(c, k)
      runs[i] = v >= PAUSE_THRESHOLD ? (runs[i] ?? 0) + 1 : 0
      if ((runs[i] ?? 0) >= CONSECUTIVE) {
        byK[i]?.push(s.ends[t] ?? 0)
        runs[i] = 0
      }
    }
  }
  // Pause points: the scores one pause would give, chunk after chunk (only where made above).
  const point: number[] = []
  for (const key of scored.keys()) {
    const [c, j] = key.split(':').map(Number) as [number, number]
    if (j !== 1) continue
    for (let jj = 1; jj < Math.max(...KS); jj++) {
      const a = scored.get(`${c}:${jj}`)
      const b = scored.get(`${c}:${jj + 1}`)
      if (a !== undefined && b !== undefined && a >= PAUSE_THRESHOLD && b >= PAUSE_THRESHOLD) {
        point.push(s.ends[c + jj + 1] ?? 0)
        break
      }
    }
  }
  for (const es of made.values()) r.pauseEmbeddings3 += Math.min(3, es.length)
  const best = [Math.max(0, ...s.scores), ...KS.map(() => 0)]
  for (const [key, v] of scored) {
    const i = KS.indexOf(Number(key.split(':')[1])) + 1
    if (i > 0 && v > (best[i] ?? 0)) best[i] = v
  }
  return { byK, point, best }
}

function concat32(xs: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(xs.reduce((n, x) => n + x.length, 0))
  let at = 0
  for (const x of xs) {
    out.set(x, at)
    at += x.length
  }
  return out
}

/** The rules compared: the service alone, with each k, with every k, with a pause point. */
const RULES = ['without', ...KS.map((k) => `k=${k}`), 'all k', 'pause point']
function wakesBy(service: number[], p: PauseWakes): number[][] {
  const all = p.byK.flat()
  return [
    service,
    ...p.byK.map((w) => [...service, ...w]),
    [...service, ...all],
    [...service, ...p.point],
  ]
}

/** Distinct wakes: times apart by the refractory time (the detector's own rule). */
function distinct(times: number[]): number {
  let n = 0
  let until = Number.NEGATIVE_INFINITY
  for (const t of [...times].sort((a, b) => a - b)) {
    if (t < until) continue
    n++
    until = t + REFRACTORY_MS
  }
  return n
}

const silence = (ms: number) => new Int16Array((ms * RATE) / 1000)
/**
 * The phrase and a command, said in one breath or with a 0.5 s pause between, from the voice's
 * cache (no command: the phrase alone); wake-holdout.bench.ts's clips too.
 */
export function wakeClip(v: Voice, command: string | undefined, pause: boolean): Int16Array {
  if (!command) return utterance(v, 'hey jarvis', `hold-${v.name}-hey_jarvis`)
  const key = command.replace(/[^a-z]+/g, '_')
  if (!pause) return utterance(v, `hey jarvis ${command}`, `hold-${v.name}-hj_${key}`)
  return concat([
    utterance(v, 'hey jarvis', `hold-${v.name}-hey_jarvis`),
    silence(500),
    utterance(v, command, `hold-${v.name}-${key}`),
  ])
}

/**
 * Where each pause wake's pre-roll ends (in byK's order, flattened): at the wake (the default, as
 * the wake stage cuts it) or, with WAKE_PAUSE_ROLL=point, at the end of the chunk the pause
 * follows (the phrase's end as the pause saw it, before the command).
 */
function rollEnds(p: PauseWakes): number[] {
  const atPoint = process.env.WAKE_PAUSE_ROLL === 'point'
  return p.byK.flatMap((ws, i) => ws.map((t) => (atPoint ? t - (KS[i] ?? 0) * CHUNK_MS : t)))
}

/** The pre-roll the wake stage hands the local check: the 2 s up to the wake (+20 ms: a frame). */
function preRoll(pcm: Int16Array, startMs: number, wakeMs: number): Uint8Array {
  const end = Math.min(pcm.length, Math.round(((wakeMs - startMs + 20) * RATE) / 1000))
  return bytes(pcm.subarray(Math.max(0, end - (DEFAULT_WAKE_PRE_ROLL_MS * RATE) / 1000), end))
}

/**
 * `check`: the local check (listen.localCheck at its default) on a pre-roll, for what the
 * pauses add: the wakes they save and the false wakes they make.
 */
export async function pauseBench(
  out: (s: string) => void,
  check: (roll: Uint8Array) => Promise<boolean>,
): Promise<void> {
  const r = await rig()
  let clock = 0
  const sets: [string, Voice[]][] = [
    ['holdout', holdoutVoices()],
    ['tuning', tuningVoices()],
  ]
  const only = process.env.WAKE_PAUSE_PART ?? ''
  out(
    `\nsynthesized pause: hey_jarvis at ${THRESHOLD} ×${CONSECUTIVE}, the service's detector (hop ${COARSE_HOP}, 40 ms phase) ± pauses of k = ${KS.join(', ')} chunks scored from ${SHARE} of the threshold, a pause's wake at ${PAUSE_THRESHOLD}; quiet = the ${FLOOR_N} quietest of the last ${FLOOR_CHUNKS} chunks`,
  )
  if (only !== 'false') {
    out(
      `\n| voices | condition | command | clips | missed: ${RULES.join(' / ')} | saved by a pause (all k) / of those, the local check agrees |`,
    )
    out('|---|---|---|---|---|---|')
    const wanted = (process.env.WAKE_PAUSE_CONDITIONS ?? 'clean,pink 10 dB,babble 10 dB').split(',')
    const debug = process.env.WAKE_PAUSE_DEBUG === '1'
    const conditions = noiseConditions().filter(([n]) => wanted.includes(n))
    let k = 0
    const setsWanted = (process.env.WAKE_PAUSE_SETS ?? 'holdout,tuning').split(',')
    for (const [set, vs] of sets.filter(([name]) => setsWanted.includes(name))) {
      for (const [name, noise, snr] of conditions) {
        for (const pause of [false, true]) {
          const missed = RULES.map(() => 0)
          let saved = 0
          let savedAgreed = 0
          let n = 0
          for (const v of vs) {
            for (const c of COMMANDS) {
              const clip = wakeClip(v, c, pause)
              const padded = concat([silence(1000 + ((k * 10) % 80)), clip, silence(1000)])
              const pcm = noise
                ? mixUnder(padded, clip, noise, snr, (k * 7919) % noise.length)
                : padded
              k++
              const startMs = clock
              const got = await scoreWithPauses(r, pcm, startMs)
              clock = got.endMs + 10_000
              const first = Math.min(...rollEnds(got.pause))
              if (got.service.length === 0 && Number.isFinite(first)) {
                saved++
                if (await check(preRoll(pcm, startMs, first))) savedAgreed++
              }
              n++
              wakesBy(got.service, got.pause).forEach((w, i) => {
                if (w.length === 0) missed[i] = (missed[i] ?? 0) + 1
              })
              if (debug && got.service.length === 0) {
                out(
                  `  missed ${v.name} "${c}": best real / k=${KS.join(',')}: ${got.pause.best.map((b) => b.toFixed(2)).join(' / ')}`,
                )
              }
            }
          }
          out(
            `| ${set} (${vs.length}) | ${name} | ${pause ? 'after a pause' : 'one breath'} | ${n} | ${missed.join(' / ')} | ${saved} / ${savedAgreed} |`,
          )
        }
      }
    }
  }
  if (only === 'missed') return close(r)
  const tvMin = Number(process.env.WAKE_HOLDOUT_TV_MIN ?? 30)
  const streams: [string, { stream: Int16Array; timeline: Spoken[] }][] = [
    [
      'television, near-misses (holdout voices)',
      spokenStream(
        TV.map((text, i) => ({ key: `tv${i}`, text })),
        holdoutVoices(),
        tvMin,
        'tv',
      ),
    ],
    ['ordinary non-wake speech (8 voices)', nonWakeStream(voices().slice(0, 8))],
  ]
  const added: string[] = []
  let addedSent = 0
  out(
    `\n| stream | minutes | false wakes (per hour): ${RULES.join(' / ')} | pause embeddings per audio s, k ≤ 3 / all | pause CPU, ms per audio s | detector CPU (service), ms per audio s |`,
  )
  out('|---|---|---|---|---|---|')
  for (const [name, { stream, timeline }] of streams) {
    const hours = stream.length / RATE / 3600
    r.pauseCpuMs = 0
    r.pauseEmbeddings = 0
    r.pauseEmbeddings3 = 0
    r.serviceCpuMs = 0
    const startMs = clock
    const got = await scoreWithPauses(r, stream, startMs)
    clock = got.endMs + 10_000
    const counts = wakesBy(got.service, got.pause).map(distinct)
    const seconds = hours * 3600
    // The pauses' own wakes (every k): what each said, the utterance begun 200 ms before it.
    const service = got.service
    const ends = rollEnds(got.pause)
    for (const [i, t] of got.pause.byK
      .flat()
      .map((t, i) => [i, t] as const)
      .sort((a, b) => a[1] - b[1])) {
      if (service.some((w) => Math.abs(w - t) < REFRACTORY_MS)) continue
      service.push(t)
      const at = (t - startMs) * (RATE / 1000)
      const said = timeline.findLast((u) => u.from <= at - 200 * (RATE / 1000))
      const sent = await check(preRoll(stream, startMs, ends[i] ?? t))
      if (sent) addedSent++
      added.push(
        `  ${name.split(',')[0]} ${(at / RATE).toFixed(1)} s: ${said?.voice} "${said?.text}" — the local check ${sent ? 'SENDS it' : 'refuses it'}`,
      )
    }
    out(
      `| ${name} | ${(hours * 60).toFixed(1)} | ${counts.map((c) => `${c} (${(c / hours).toFixed(1)})`).join(' / ')} | ${(r.pauseEmbeddings3 / seconds).toFixed(3)} / ${(r.pauseEmbeddings / seconds).toFixed(3)} | ${(r.pauseCpuMs / seconds).toFixed(2)} | ${(r.serviceCpuMs / seconds).toFixed(1)} |`,
    )
  }
  out(
    `\nThe pauses' own false wakes (any k), each with the utterance begun 200 ms before it (the local check sends ${addedSent} of ${added.length}):`,
  )
  for (const a of added) out(a)
  await close(r)
}

async function close(r: Rig): Promise<void> {
  await r.service.close()
  await r.exact.close()
  await r.embedding.close()
}
