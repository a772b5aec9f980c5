// The second phase, 40 ms off the chunks (issue 46 item 2; `BENCH_ONLY=offset npm run bench --
// wake-word`): the wake clips ("hey jarvis" and "alexa", every TTS voice at four speeds, 1 s of
// silence either side) started 0, 20, 40 and 60 ms later, clean and at 10 dB of pink noise and of
// babble, and the non-wake speech stream, each scored in bulk by the detector as the service runs
// it (coarse scoring, hop 2) without further phases, with the second (40 ms off the chunks), and
// with three (20, 40 and 60 ms off), every head at 0.5, two chunks in a row. Per condition: the clips missed at each start, the clips whose verdict depends on where
// the chunks fall, the false wakes, the further phases' scores made and the CPU each took.
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { phasedDetector } from '../../test/helpers/wake.js'
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

const RATE = 16_000
const SHIFTS_MS = [0, 20, 40, 60]

interface Side {
  readonly name: string
  readonly d: OpenWakeWordDetector
  readonly wakes: WakeDetection[]
  cpuMs: number
}

async function side(name: string, phases: readonly number[]): Promise<Side> {
  const wakes: WakeDetection[] = []
  const d = await phasedDetector({
    onWake: (w) => wakes.push(w),
    threshold: 0.5,
    allHeads: true,
    coarseHop: 2,
    ...(phases.length === 0 ? { offsetPhase: false } : { offsetPhases: phases }),
  })
  return { name, d, wakes, cpuMs: 0 }
}

async function score(s: Side, pcm: Int16Array, startMs: number): Promise<number> {
  s.d.reset()
  s.wakes.length = 0
  const c = process.cpuUsage()
  const end = await s.d.scoreRecorded(bytes(pcm), startMs)
  const u = process.cpuUsage(c)
  s.cpuMs += (u.user + u.system) / 1000
  return end
}

export async function offsetBench(out: (s: string) => void): Promise<void> {
  const sides = [
    await side('without', []),
    await side('40 ms', [2]),
    await side('20, 40 and 60 ms', [1, 2, 3]),
  ]
  const vs = voices([130, 150, 170, 190])
  const clips = WAKE_PHRASES.flatMap((p) =>
    vs.map((v) => ({ head: p.head, pcm: utterance(v, p.text, `wake-${p.head}-${v.name}`) })),
  )
  out(
    `\nthe second phase: ${clips.length} wake clips × starts ${SHIFTS_MS.join(' / ')} ms, every head at 0.5 ×2, coarse scoring (hop 2): ${sides.map((s) => s.name).join(' → ')}`,
  )
  out(
    '| condition | missed at each start, hey_jarvis | missed at each start, alexa | missed, all starts | clips whose verdict depends on the start | second-phase scores per chunk | CPU (ms per audio s) |',
  )
  out('|---|---|---|---|---|---|---|')
  const wanted = ['clean', 'pink 10 dB', 'babble 10 dB']
  let clock = 0
  for (const [name, noise, snr] of noiseConditions().filter(([n]) => wanted.includes(n))) {
    const missed = sides.map(() => SHIFTS_MS.map(() => ({ hey_jarvis: 0, alexa: 0 })))
    const depends = sides.map(() => 0)
    let seconds = 0
    for (const s of sides) s.cpuMs = 0
    const before = sides.map((s) => s.d.stats())
    for (const [ci, clip] of clips.entries()) {
      const heardBy = sides.map(() => [] as boolean[])
      for (const [k, ms] of SHIFTS_MS.entries()) {
        const padded = concat([new Int16Array(RATE + ms * 16), clip.pcm, new Int16Array(RATE)])
        const heard = noise
          ? mixUnder(padded, clip.pcm, noise, snr, (ci * 7919) % noise.length)
          : padded
        seconds += heard.length / RATE
        let end = clock
        for (const [i, s] of sides.entries()) {
          end = await score(s, heard, clock)
          const woke = s.wakes.some((w) => w.phrase === clip.head)
          heardBy[i]?.push(woke)
          const m = missed[i]?.[k] as Record<string, number>
          if (!woke) m[clip.head] = (m[clip.head] ?? 0) + 1
        }
        clock = end + 10_000
      }
      heardBy.forEach((h, i) => {
        if (h.some((x) => x) && h.some((x) => !x)) depends[i] = (depends[i] ?? 0) + 1
      })
    }
    const per = clips.length / WAKE_PHRASES.length
    const cell = (head: 'hey_jarvis' | 'alexa') =>
      sides.map((_, i) => missed[i]?.map((m) => m[head]).join(' / ')).join(' → ')
    const all = sides
      .map((_, i) => (missed[i] ?? []).reduce((n, m) => n + m.hey_jarvis + m.alexa, 0))
      .join(' → ')
    const offsetPerChunk = sides
      .map((s, i) => {
        const a = s.d.stats()
        const b = before[i]
        const chunks = a.chunksScored - (b?.chunksScored ?? 0)
        return ((a.offsetScores - (b?.offsetScores ?? 0)) / chunks).toFixed(3)
      })
      .join(' → ')
    out(
      `| wake clips, ${name} (of ${per} each per start) | ${cell('hey_jarvis')} | ${cell('alexa')} | ${all} of ${clips.length * SHIFTS_MS.length} | ${depends.join(' → ')} of ${clips.length} | ${offsetPerChunk} | ${sides.map((s) => (s.cpuMs / seconds).toFixed(1)).join(' → ')} |`,
    )
  }
  const negVoices = Number(process.env.WAKE_BENCH_VOICES ?? 0) || undefined
  const { stream } = nonWakeStream(voices().slice(0, negVoices))
  const seconds = stream.length / RATE
  const before = sides.map((s) => s.d.stats())
  const wakes: string[] = []
  for (const s of sides) {
    s.cpuMs = 0
    await score(s, stream, clock)
    wakes.push(s.wakes.map((w) => w.phrase).join(', ') || 'none')
  }
  const rows = sides.map((s, i) => {
    const a = s.d.stats()
    const b = before[i]
    const chunks = a.chunksScored - (b?.chunksScored ?? 0)
    const offsetScores = a.offsetScores - (b?.offsetScores ?? 0)
    return `${s.name}: ${s.wakes.length} wakes (${((s.wakes.length * 3600) / seconds).toFixed(1)} an hour: ${wakes[i]}), ${offsetScores} second-phase scores for ${chunks} chunks, ${(s.cpuMs / seconds).toFixed(1)} ms CPU per audio s`
  })
  out(`\nnon-wake speech, clean (${(seconds / 60).toFixed(1)} min):`)
  for (const r of rows) out(`- ${r}`)
  for (const s of sides) await s.d.close()
}
