// Why the built companion misses after-a-pause wakes on the HOLDOUT (issue 46; diagnosis only,
// nothing is tuned here): the service's detector with the companion (companion-measure.ts) says
// which after-a-pause clips it misses, clean and at 10 dB; the dense cache of those clips
// (var/bench-wake/companion/holdout-clips.*: every chunk's exact window and the head's score, made
// by the `head` branch with companion-measure's placement) says, chunk by chunk around the
// phrase's end, what the head scored, whether the companion was asked (head ≥ its gate), what it
// scored, and whether the two-in-a-row rule stood in the way.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type CompanionModel, companionScore } from '../../src/adapters/openwakeword/companion.js'
import { CHUNK_SAMPLES, EMBEDDING_SIZE } from '../../src/adapters/openwakeword/features.js'
import { placedClip, serviceDetector } from './companion-measure.js'
import { noiseConditions, utterance } from './corpus.js'
import { COMMANDS, holdoutVoices } from './holdout.js'
import { wakeClip } from './pause.js'

const RATE = 16_000
const WINDOW = 16
const CACHE = join(import.meta.dirname, '..', '..', 'var', 'bench-wake', 'companion')
const WANTED = ['clean', 'pink 10 dB', 'babble 10 dB']

interface Cached {
  readonly condition: string
  readonly pause: boolean
  readonly voice: string
  readonly head: number[]
  readonly n: number
}

export async function diagnoseCompanion(
  m: CompanionModel,
  out: (s: string) => void,
): Promise<void> {
  const meta = join(CACHE, 'holdout-clips.json')
  if (!existsSync(meta)) {
    out(`no dense cache at ${meta}: the diagnosis reads it`)
    return
  }
  const cached = JSON.parse(readFileSync(meta, 'utf8')) as Cached[]
  const b = readFileSync(join(CACHE, 'holdout-clips.bin'))
  const all = new Float32Array(b.buffer, b.byteOffset, b.byteLength >> 2)
  const offsets: number[] = []
  let at = 0
  for (const c of cached) {
    offsets.push(at)
    at += c.n
  }
  const vs = holdoutVoices()
  const both = await serviceDetector(m)
  const classes = new Map<string, number>()
  let k = 0
  let idx = 0
  for (const [name, noise, snr] of noiseConditions()) {
    for (const pause of [false, true]) {
      const wanted = pause && WANTED.includes(name)
      for (const v of vs) {
        for (const c of COMMANDS) {
          const i = idx++
          const kk = k++
          if (!wanted) continue
          const cache = cached[i] as Cached
          if (cache.voice !== v.name || cache.condition !== name || cache.pause !== pause)
            throw new Error(`the dense cache is out of order at ${i}: ${cache.voice}`)
          const pcm = placedClip(wakeClip(v, c, pause), kk, noise && [noise, snr])
          const { wakes } = await both.score(pcm)
          if (wakes.length > 0) continue
          if (Math.floor(pcm.length / CHUNK_SAMPLES) !== cache.n / EMBEDDING_SIZE - (WINDOW - 1))
            out(
              `  (${v.name} "${c}": the cache holds ${cache.n / EMBEDDING_SIZE} rows for ${pcm.length} samples)`,
            )
          const lead = (1000 + ((kk * 10) % 80)) * (RATE / 1000)
          const phrase = utterance(v, 'hey jarvis', `hold-${v.name}-hey_jarvis`).length
          const end = (lead + phrase) / CHUNK_SAMPLES
          const emb = all.subarray(offsets[i], (offsets[i] ?? 0) + cache.n)
          const rows = cache.n / EMBEDDING_SIZE - (WINDOW - 1)
          const line: string[] = []
          let bestHead = 0
          let bestComp = 0
          let bestAsked = 0
          let run = 0
          let longest = 0
          for (let ch = 5; ch < rows; ch++) {
            const h = cache.head[ch] ?? 0
            const p = companionScore(
              m,
              emb.subarray(ch * EMBEDDING_SIZE, (ch + WINDOW) * EMBEDDING_SIZE),
            )
            const asked = h >= m.gate
            const s = Math.max(h, asked ? p : 0)
            run = s >= 0.5 ? run + 1 : 0
            longest = Math.max(longest, run)
            const rel = ch + 1 - end
            if (rel >= -3 && rel <= 12) {
              bestHead = Math.max(bestHead, h)
              bestComp = Math.max(bestComp, p)
              if (asked) bestAsked = Math.max(bestAsked, p)
              line.push(`${rel.toFixed(1)}:${h.toFixed(3)}/${p.toFixed(2)}${asked ? '' : '*'}`)
            }
          }
          const why =
            longest >= 1
              ? 'two in a row (one chunk ≥ 0.5)'
              : bestComp >= 0.5
                ? 'not asked (companion ≥ 0.5 only under the gate)'
                : 'companion low'
          classes.set(`${name}: ${why}`, (classes.get(`${name}: ${why}`) ?? 0) + 1)
          out(
            `${name} | ${v.name} | "${c}" | head max ${bestHead.toFixed(3)}, companion max ${bestComp.toFixed(3)} (asked ${bestAsked.toFixed(3)}), longest run ${longest} → ${why}`,
          )
          out(
            `   chunks after the phrase's end: head/companion (* under the gate): ${line.join(' ')}`,
          )
        }
      }
    }
  }
  await both.close()
  out('\nmissed after a pause, by cause (the service detector misses; the dense cache explains):')
  for (const [c, n] of classes) out(`  ${c}: ${n}`)
}
