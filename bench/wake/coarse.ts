// Coarse scoring against exact scoring on the same audio (issue 47; `BENCH_ONLY=coarse npm run
// bench -- wake-word`): the wake clips (both phrases, every espeak-ng voice at four speeds, clean
// and at 10 dB of pink noise and of babble) and the non-wake speech stream, each scored in bulk by
// a detector that scores every chunk exactly (coarseHop 1) and one that scores coarsely while every
// head is far below its threshold (the hop the service runs at). Per chunk and head: the largest
// difference where the exact score was 0.1 or more (what a wake depends on) and anywhere; each
// clip's peak score of its own head, both ways; the wakes, both ways; the CPU each took.
import { join } from 'node:path'
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import { PRETRAINED } from '../../src/adapters/openwakeword/model-files.js'
import type { InferenceRuntime } from '../../src/adapters/openwakeword/model-session.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { MODEL_DIR, pinnedDetector } from '../../test/helpers/wake.js'
import {
  bytes,
  concat,
  mixUnder,
  noiseConditions,
  nonWakeStream,
  utterance,
  voices,
  WAKE_PHRASES,
} from './corpus.js'
import { inThreadRuntime } from './whole-runtime.js'

const RATE = 16_000
const HEADS = PRETRAINED.map((h) => ({ ...h, file: join(MODEL_DIR, h.file) }))

interface Side {
  readonly d: OpenWakeWordDetector
  readonly scores: Map<number, readonly number[]>
  readonly wakes: WakeDetection[]
  cpuMs: number
}

async function side(hop: number, runtime?: InferenceRuntime): Promise<Side> {
  const scores = new Map<number, readonly number[]>()
  const wakes: WakeDetection[] = []
  const d = await pinnedDetector({
    onWake: (w) => wakes.push(w),
    phrases: HEADS.map((h) => ({ phrase: h.name, file: h.file, threshold: 0.5 })),
    onScores: (s, at) => scores.set(at, [...s]),
    coarseHop: hop,
    ...(runtime ? { runtime } : {}),
  })
  return { d, scores, wakes, cpuMs: 0 }
}

async function score(s: Side, pcm: Int16Array, startMs: number): Promise<number> {
  s.d.reset()
  s.scores.clear()
  s.wakes.length = 0
  const c = process.cpuUsage()
  const end = await s.d.scoreRecorded(bytes(pcm), startMs)
  const u = process.cpuUsage(c)
  s.cpuMs += (u.user + u.system) / 1000
  return end
}

interface Diff {
  chunks: number
  /** Largest |exact − coarse-mode| where the exact score was ≥ 0.1, and anywhere. */
  maxNear: number
  maxAny: number
  /** Chunks where the exact score was ≥ 0.1 and the coarse mode's differed by more than 1e-6. */
  nearOff: number
}

function compare(a: Side, b: Side, into: Diff): void {
  for (const [at, exact] of a.scores) {
    const other = b.scores.get(at)
    // The last few chunks of a clip wait for a coarse score that the reset before the next
    // clip forgoes: only those may be missing.
    if (!other) continue
    into.chunks++
    exact.forEach((e, i) => {
      const d = Math.abs(e - (other[i] ?? 0))
      into.maxAny = Math.max(into.maxAny, d)
      if (e >= 0.1) {
        into.maxNear = Math.max(into.maxNear, d)
        if (d > 1e-6) into.nearOff++
      }
    })
  }
}

const key = (w: WakeDetection) => `${w.phrase}@${w.heardAtMs}`

/**
 * `streamed`: instead of exact against coarse, both at `hop` and both in this thread
 * (whole-runtime.ts), the embedding model run whole (the scoring before it was streamed) against
 * streamed (the sessions the service loads): "exact" is then the whole model's side.
 */
export async function coarseBench(
  out: (s: string) => void,
  hop: number,
  streamed = false,
): Promise<void> {
  const exact = streamed ? await side(hop, await inThreadRuntime(false)) : await side(1)
  const coarse = streamed ? await side(hop, await inThreadRuntime(true)) : await side(hop)
  out(
    streamed
      ? `\nthe embedding model streamed against run whole, both in this thread at hop ${hop}, every head at 0.5, two chunks in a row`
      : `\ncoarse scoring (hop ${hop}) against exact scoring, every head at 0.5, two chunks in a row`,
  )
  const [nameA, nameB] = streamed ? ['whole', 'streamed'] : ['exact', 'coarse']
  out(
    `| audio | chunks | max \\|Δ\\| where ${nameA} ≥ 0.1 (chunks off) | max \\|Δ\\| anywhere | own-head peak Δ, max | wakes ${nameA} / ${nameB} / differing | CPU ${nameA} → ${nameB} (ms per audio s) |`,
  )
  out('|---|---|---|---|---|---|---|')
  const vs = voices([130, 150, 170, 190])
  const clips = WAKE_PHRASES.flatMap((p) =>
    vs.map((v) => ({ head: p.head, pcm: utterance(v, p.text, `wake-${p.head}-${v.name}`) })),
  )
  const wanted = ['clean', 'pink 10 dB', 'babble 10 dB']
  // Capture time runs on through every clip and stream, as on a device (the refractory time).
  let clock = 0
  for (const [name, noise, snr] of noiseConditions().filter(([n]) => wanted.includes(n))) {
    const diff: Diff = { chunks: 0, maxNear: 0, maxAny: 0, nearOff: 0 }
    let peakDiff = 0
    let wakesA = 0
    let wakesB = 0
    let differing = 0
    let seconds = 0
    exact.cpuMs = 0
    coarse.cpuMs = 0
    for (const [ci, clip] of clips.entries()) {
      const padded = concat([new Int16Array(RATE), clip.pcm, new Int16Array(RATE)])
      const heard = noise
        ? mixUnder(padded, clip.pcm, noise, snr, (ci * 7919) % noise.length)
        : padded
      seconds += heard.length / RATE
      await score(exact, heard, clock)
      clock = await score(coarse, heard, clock)
      clock += 10_000
      compare(exact, coarse, diff)
      const h = HEADS.findIndex((x) => x.name === clip.head)
      const peak = (s: Side) => Math.max(...[...s.scores.values()].map((v) => v[h] ?? 0))
      peakDiff = Math.max(peakDiff, Math.abs(peak(exact) - peak(coarse)))
      const a = new Set(exact.wakes.map(key))
      const b = new Set(coarse.wakes.map(key))
      wakesA += a.size
      wakesB += b.size
      differing += [...a].filter((k) => !b.has(k)).length + [...b].filter((k) => !a.has(k)).length
    }
    out(
      `| wake clips, ${name} (${clips.length}) | ${diff.chunks} | ${diff.maxNear.toExponential(1)} (${diff.nearOff}) | ${diff.maxAny.toFixed(3)} | ${peakDiff.toExponential(1)} | ${wakesA} / ${wakesB} / ${differing} | ${(exact.cpuMs / seconds).toFixed(1)} → ${(coarse.cpuMs / seconds).toFixed(1)} |`,
    )
  }
  const negVoices = Number(process.env.WAKE_BENCH_VOICES ?? 0) || undefined
  const { stream } = nonWakeStream(voices().slice(0, negVoices))
  const diff: Diff = { chunks: 0, maxNear: 0, maxAny: 0, nearOff: 0 }
  exact.cpuMs = 0
  coarse.cpuMs = 0
  await score(exact, stream, clock)
  await score(coarse, stream, clock)
  compare(exact, coarse, diff)
  const a = new Set(exact.wakes.map(key))
  const b = new Set(coarse.wakes.map(key))
  const differing = [...a].filter((k) => !b.has(k)).length + [...b].filter((k) => !a.has(k)).length
  const seconds = stream.length / RATE
  const st = coarse.d.stats()
  out(
    `| non-wake speech, clean (${(seconds / 60).toFixed(1)} min) | ${diff.chunks} | ${diff.maxNear.toExponential(1)} (${diff.nearOff}) | ${diff.maxAny.toFixed(3)} | — | ${a.size} / ${b.size} / ${differing} | ${(exact.cpuMs / seconds).toFixed(1)} → ${(coarse.cpuMs / seconds).toFixed(1)} |`,
  )
  out(
    `non-wake speech: ${st.coarseScores} coarse scores for ${st.chunksScored} chunks (${((100 * st.coarseScores * hop) / st.chunksScored).toFixed(0)} % of the chunks went by coarsely)`,
  )
  await exact.d.close()
  await coarse.d.close()
}
