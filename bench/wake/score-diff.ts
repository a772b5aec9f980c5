// Every score of this build's chain against another build's (issue 47: what the far hop, the
// requests of 4 chunks and the mel runs of a request change), on the same audio: every wake and
// VAD fixture, each alone with 1 s of silence either side and all of them in one stream, every
// pretrained head at 0.5 (or SCORE_DIFF_HEADS), the service's hop, each build's own request size
// while coarse (SCORE_DIFF_BATCH_OTHER: the other's, 2 before issue 47's drops). SCORE_DIFF_OTHER:
// the other build's tree (its src/, run by tsx). Chunk by chunk: bit-identical scores, the largest
// difference where either build's score was at a fiftieth of the threshold or more (a coarse
// score there makes scoring exact), the largest anywhere, and there each build's largest distance
// from every chunk scored exactly (hop 1, this build); the wakes. Prints one JSON line.
// `SCORE_DIFF_OTHER=/path/to/base node --import tsx bench/wake/score-diff.ts`
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseWav } from '../../src/audio/wav.js'
import { EMBEDDING, HEADS, MEL } from '../../test/helpers/wake.js'
import {
  concat,
  mixUnder,
  noiseConditions,
  nonWakeStream,
  utterance,
  voices,
  WAKE_PHRASES,
} from './corpus.js'

const other = process.env.SCORE_DIFF_OTHER
if (!other) throw new Error('score-diff: set SCORE_DIFF_OTHER to the other build’s tree')
const BATCH_OTHER = Number(process.env.SCORE_DIFF_BATCH_OTHER ?? 2)
/** SCORE_DIFF_HEADS: the heads scored, comma-separated names (every pretrained one by default). */
const PICKED = (process.env.SCORE_DIFF_HEADS ?? '').split(',').filter(Boolean)
const picked = HEADS.filter((h) => PICKED.length === 0 || PICKED.includes(h.name))
const here = join(import.meta.dirname, '..', '..')

interface Built {
  readonly score: (pcm: Int16Array) => Promise<{ scores: number[][]; wakes: string[] }>
}

async function build(tree: string, batch: number, hop = 2): Promise<Built> {
  const m = (p: string) => import(pathToFileURL(join(tree, 'src', p)).href)
  const { ScoringChain } = await m('adapters/openwakeword/chain.js')
  const { FeaturePipeline, noisePrefill } = await m('adapters/openwakeword/features.js')
  const { loadRuntime } = await m('adapters/openwakeword/runtime.js')
  const rt = await loadRuntime('native')
  const mel = await rt.load(MEL)
  const emb = await rt.load(EMBEDDING)
  await emb.stream?.()
  const heads: { phrase: string; model: unknown; threshold: number }[] = []
  for (const h of picked)
    heads.push({ phrase: h.name, model: await rt.load(h.file), threshold: 0.5 })
  const prefill = await noisePrefill(mel, emb, 18)
  return {
    async score(pcm) {
      const chain = new ScoringChain({
        features: FeaturePipeline.create(mel, emb, prefill),
        heads,
        consecutive: 2,
        refractoryMs: 2000,
        coarseHop: hop,
      })
      const scores: number[][] = []
      const wakes: string[] = []
      const n = Math.floor(pcm.length / 1280)
      let exact = false
      for (let k = 0; k < n; ) {
        const size = exact ? 1 : batch
        const chunks = []
        for (let j = 0; j < size && k < n; j++, k++) {
          const chunk = pcm.slice(k * 1280, (k + 1) * 1280)
          chunks.push({ chunk, heard: true, endAt: (k + 1) * 80, arrivedAt: 0 })
        }
        const r = await chain.score({ reset: false, thresholds: heads.map(() => 0.5), chunks })
        for (const e of r.events) {
          if (e.kind === 'scores') scores.push(e.scores)
          if (e.kind === 'wake') wakes.push(`${e.detection.phrase}@${e.detection.heardAtMs}`)
        }
        exact = r.exact
      }
      return { scores, wakes }
    },
  }
}

const clips: Int16Array[] = []
const silence = new Int16Array(16_000)
for (const dir of ['wake', 'vad']) {
  const d = join(here, 'fixtures', dir)
  for (const f of readdirSync(d).filter((f) => f.endsWith('.wav'))) {
    const pcm = parseWav(readFileSync(join(d, f)), 16_000).pcm
    const s = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength >> 1)
    const padded = new Int16Array(s.length + 2 * silence.length)
    padded.set(s, silence.length)
    clips.push(padded)
  }
}
const all = new Int16Array(clips.reduce((n, c) => n + c.length, 0))
let at = 0
for (const c of clips) {
  all.set(c, at)
  at += c.length
}
/**
 * SCORE_DIFF_CORPUS=1: the wake bench's corpora instead — every voice's wake phrases at four speeds,
 * clean and at 10 dB of pink noise and of babble, 1 s of silence either side, and the non-wake
 * speech stream of 8 voices (the false-wake bench's 29 minutes).
 */
function corpus(): Int16Array[] {
  const vs = voices([130, 150, 170, 190])
  const wake = WAKE_PHRASES.flatMap((p) =>
    vs.map((v) => utterance(v, p.text, `wake-${p.head}-${v.name}`)),
  )
  const out: Int16Array[] = []
  for (const [name, noise, snr] of noiseConditions()) {
    if (!['clean', 'pink 10 dB', 'babble 10 dB'].includes(name)) continue
    for (const [ci, pcm] of wake.entries()) {
      const padded = concat([new Int16Array(16_000), pcm, new Int16Array(16_000)])
      out.push(noise ? mixUnder(padded, pcm, noise, snr, (ci * 7919) % noise.length) : padded)
    }
  }
  out.push(nonWakeStream(voices().slice(0, 8)).stream)
  return out
}
const streams = process.env.SCORE_DIFF_CORPUS === '1' ? corpus() : [...clips, all]

const mine = await build(here, 4)
const theirs = await build(other, BATCH_OTHER)
/** Every chunk exact (hop 1): where the two builds differ near a threshold, which is nearer it. */
const exactly = await build(here, 1, 1)
/** Near a threshold (either build at a fiftieth or more): each build's largest distance from exact. */
const fromExact = { mine: 0, theirs: 0 }
let chunks = 0
let identical = 0
let nearChunks = 0
let nearMax = 0
let anyMax = 0
const wakes = { mine: 0, theirs: 0, differing: 0 }
for (const pcm of streams) {
  const [a, b] = [await mine.score(pcm), await theirs.score(pcm)]
  const e = await exactly.score(pcm)
  wakes.mine += a.wakes.length
  wakes.theirs += b.wakes.length
  wakes.differing += a.wakes.filter((w) => !b.wakes.includes(w)).length
  wakes.differing += b.wakes.filter((w) => !a.wakes.includes(w)).length
  for (let k = 0; k < Math.min(a.scores.length, b.scores.length); k++) {
    const [x = [], y = []] = [a.scores[k], b.scores[k]]
    chunks++
    if (x.every((v, i) => Object.is(v, y[i]))) identical++
    const d = Math.max(...x.map((v, i) => Math.abs(v - (y[i] ?? 0))))
    anyMax = Math.max(anyMax, d)
    if ([...x, ...y].some((v) => v >= 0.01)) {
      nearChunks++
      nearMax = Math.max(nearMax, d)
      const z = e.scores[k] ?? []
      const off = (v: number[]) => Math.max(...v.map((u, i) => Math.abs(u - (z[i] ?? 0))))
      fromExact.mine = Math.max(fromExact.mine, off(x))
      fromExact.theirs = Math.max(fromExact.theirs, off(y))
    }
  }
}
process.stdout.write(
  `${JSON.stringify({ heads: picked.map((h) => h.name), streams: streams.length, chunks, identical, nearChunks, nearMax, anyMax, fromExact, wakes })}\n`,
)
