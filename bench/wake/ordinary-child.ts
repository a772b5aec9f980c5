// One shard of wake-ordinary.bench.ts: its share of the long ordinary-speech stream, made a block
// (~1 min) at a time and never held whole, scored by the service's detector twice (the default
// install's `createWakeDetector`, with the companion and with `"companion": false`), each fire's
// 2 s pre-roll through the real local check. Writes what it found to its JSON file after every
// block, so a run cut short still says what it heard.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { KeyphraseCheck } from '../../src/adapters/pocketsphinx/keyphrase-check.js'
import { DEFAULT_WAKE_PRE_ROLL_MS } from '../../src/audio/wake-onset.js'
import { silentLogger } from '../../src/core/logger.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { bytes, concat, pinkNoise, rms, utterance } from './corpus.js'
import { engineOf, holdoutVoices } from './holdout.js'
import {
  DETECTORS,
  type Fire,
  ORDINARY_DIR,
  ordinaryDetector,
  ordinaryTexts,
  type ShardResult,
  type Uttered,
} from './ordinary.js'

const RATE = 16_000
const FRAME = RATE / 50
/** listen.localCheck.threshold's default (src/app/config/schema.ts). */
const DEFAULT_KWS = 1e-12
/** Quiet room noise under every third block: pink, about −50 dBFS RMS (speech peaks at −6). */
const ROOM_RMS = 32_768 * 10 ** (-50 / 20)

const shard = Number(process.env.WAKE_ORDINARY_SHARD ?? 0)
const shards = Number(process.env.WAKE_ORDINARY_SHARDS ?? 1)
const hours = Number(process.env.WAKE_ORDINARY_HOURS ?? 8) / shards
const file = join(ORDINARY_DIR, `shard-${shard}.json`)
const tmp = join(ORDINARY_DIR, `tmp-${shard}`)
mkdirSync(tmp, { recursive: true })

const vs = holdoutVoices()
const texts = ordinaryTexts()
const room = (() => {
  const n = pinkNoise(67, 4600 + shard)
  const g = ROOM_RMS / Math.max(1, rms(n))
  return Int16Array.from(n, (x) => Math.round(x * g))
})()

/** Every scored chunk's score and time, per detector: the fires' scores are read from them. */
const scored = DETECTORS.map(() => ({ at: [] as number[], score: [] as number[] }))
const woke = DETECTORS.map(() => [] as WakeDetection[])
const detectors = await Promise.all(
  DETECTORS.map((d, i) =>
    ordinaryDetector(d, {
      onWake: (w) => woke[i]?.push(w),
      logger: silentLogger,
      onScores: (s, at) => {
        scored[i]?.at.push(at)
        scored[i]?.score.push(s[0] ?? 0)
      },
    }),
  ),
)
const check = KeyphraseCheck.create({ phrases: ['hey jarvis'], threshold: DEFAULT_KWS })

/** One utterance made now and not kept (hours of them would be ~1 GB). */
function spoken(k: number, text: string): Int16Array | undefined {
  const v = vs[k % vs.length]
  if (!v) return undefined
  const key = `ordinary/tmp-${shard}/u`
  try {
    return utterance(v, text, key).slice()
  } catch {
    return undefined
  } finally {
    rmSync(join(tmp, 'u.s16'), { force: true })
    rmSync(join(tmp, 'u.tts.wav'), { force: true })
  }
}

/** The highest aligned score a detector gave within 400 ms of `at` (second-phase scores are not told). */
function scoreNear(i: number, at: number): number {
  const s = scored[i]
  if (!s) return 0
  let best = 0
  for (let j = s.at.length - 1; j >= 0 && (s.at[j] ?? 0) >= at - 400; j--) {
    if ((s.at[j] ?? 0) <= at + 400) best = Math.max(best, s.score[j] ?? 0)
  }
  return best
}

const timeline: Uttered[] = []
const fires: Fire[] = []
let failed = 0
let samples = 0
let noisySamples = 0
let blocks = 0
let synthMs = 0
let scoreMs = 0
let prev: Int16Array = new Int16Array(0)
const cpu0 = process.cpuUsage()
const t0 = performance.now()

function save(done: boolean): void {
  const used = process.cpuUsage(cpu0)
  const result: ShardResult = {
    shard,
    done,
    hours: samples / RATE / 3600,
    noisyHours: noisySamples / RATE / 3600,
    texts: timeline.length,
    failed,
    synthMs,
    scoreMs,
    cpuMs: (used.user + used.system) / 1000,
    wallMs: performance.now() - t0,
    speechByEngine: speechByEngine(),
    fires,
  }
  writeFileSync(file, JSON.stringify(result))
}

function speechByEngine(): Record<string, number> {
  const out: Record<string, number> = {}
  for (const u of timeline) {
    const e = engineOf(u.voice)
    out[e] = (out[e] ?? 0) + (u.nextMs - u.fromMs) / 3_600_000
  }
  return out
}

/** What was said at `at`: the utterance then, or the end of one and the start of the next. */
function saidAt(at: number): { u: Uttered | undefined; inSpeech: boolean; voicedMs: number } {
  const i = timeline.findLastIndex((u) => u.fromMs <= at)
  const u = timeline[i]
  let voicedMs = 0
  for (let j = Math.max(0, i - 3); j <= i; j++) {
    const w = timeline[j]
    if (w) voicedMs += Math.max(0, Math.min(w.toMs, at) - Math.max(w.fromMs, at - 1500))
  }
  return { u, inSpeech: !!u && at <= u.toMs, voicedMs }
}

async function flush(block: Int16Array[], startSample: number): Promise<void> {
  let pcm = concat(block)
  const rest = pcm.length % FRAME
  if (rest > 0) pcm = concat([pcm, new Int16Array(FRAME - rest)])
  const noisy = blocks % 3 === 2
  if (noisy) {
    const off = (blocks * 7919 * 13) % (room.length - RATE)
    for (let j = 0; j < pcm.length; j++) {
      const x = (pcm[j] ?? 0) + (room[(off + j) % room.length] ?? 0)
      pcm[j] = Math.max(-32768, Math.min(32767, x))
    }
    noisySamples += pcm.length
  }
  const startMs = (startSample / RATE) * 1000
  for (const w of woke) w.length = 0
  const t = performance.now()
  await Promise.all(detectors.map((d) => d.scoreRecorded(bytes(pcm), startMs)))
  scoreMs += performance.now() - t
  const both = concat([prev, pcm])
  const bothStart = startSample - prev.length
  for (const [i, ws] of woke.entries()) {
    for (const w of ws) {
      const end = Math.round(((w.heardAtMs + 20) * RATE) / 1000) - bothStart
      const roll = both.subarray(Math.max(0, end - (DEFAULT_WAKE_PRE_ROLL_MS * RATE) / 1000), end)
      const verdict = await check.check(bytes(roll))
      const { u, inSpeech, voicedMs } = saidAt(w.heardAtMs - 200)
      const next = timeline[timeline.indexOf(u as Uttered) + 1]
      fires.push({
        detector: DETECTORS[i]?.label ?? '',
        atS: w.heardAtMs / 1000,
        score: w.score,
        headScore: scoreNear(0, w.heardAtMs),
        withCompanionScore: scoreNear(1, w.heardAtMs),
        voice: u?.voice ?? '',
        key: u?.key ?? '',
        text: u?.text ?? '',
        nextText: inSpeech ? undefined : next?.text,
        inSpeech,
        voicedMs,
        noisy,
        sent: verdict.agreed,
      })
    }
  }
  prev = pcm
  samples = startSample + pcm.length
  blocks++
  save(false)
}

let block: Int16Array[] = []
let blockStart = 0
let blockSamples = 0
for (let k = shard; k < texts.length && samples < hours * 3600 * RATE; k += shards) {
  const t = texts[k]
  if (!t) break
  const ts = performance.now()
  const u = spoken(k, t.text)
  synthMs += performance.now() - ts
  if (!u) {
    // festival's diphone voices crash on a few texts: left out, and counted.
    failed++
    continue
  }
  // A turn in the talk now and then: 2–6 s of quiet (or the room), else 0.3–1 s between sentences.
  const gapMs = k % 7 === 3 ? 2000 + ((k * 397) % 4000) : 300 + ((k * 137) % 700)
  const gap = new Int16Array((RATE * gapMs) / 1000)
  const from = blockStart + blockSamples
  timeline.push({
    fromMs: (from / RATE) * 1000,
    toMs: ((from + u.length) / RATE) * 1000,
    nextMs: ((from + u.length + gap.length) / RATE) * 1000,
    key: t.key,
    text: t.text,
    voice: vs[k % vs.length]?.name ?? '',
  })
  block.push(u, gap)
  blockSamples += u.length + gap.length
  if (blockSamples >= 60 * RATE) {
    await flush(block, blockStart)
    block = []
    blockStart = samples
    blockSamples = 0
  }
}
if (block.length > 0) await flush(block, blockStart)
save(true)
await Promise.all(detectors.map((d) => d.close()))
await check.close()
rmSync(tmp, { recursive: true, force: true })
