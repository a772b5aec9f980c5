// The wake word's accuracy and cost (issue 22). `npm run bench -- wake` (BENCH_ONLY=accuracy|false|missed|level|self|cost|verifier|coarse|streamed|offset|denoise|prose).
//
// Accuracy, scored in bulk (faster than real time) with the real detector and the pretrained heads
// of the devDependency, on TTS speech made here (bench/wake/corpus.ts, cached in var/bench-wake):
//  - false wakes per hour: household prose and near-miss phrases read by every voice, as one long
//    stream, clean and again over music and pink noise (10 dB); each head's wakes counted, at the
//    defaults and at other settings (those replayed from the same per-chunk scores);
//  - missed wakes: "hey jarvis" and "alexa" from every voice at four espeak-ng speeds, clean and at
//    20/10/5 dB of pink noise and of babble (four prose streams summed); the latency from the end
//    of the phrase to the chunk that fired, in capture time;
//  - after the second opinion: each local false wake's pre-roll and the 1.5 s after it, as a
//    perfect transcriber would write them (the corpus knows what it said when), through the
//    confirmation matcher (src/voice/wake-confirmation.ts): a confirmed one is a spoken reply;
//  - self-wakes: the speaker's own replies, near-misses in them, looped back at the barge-in
//    test's echo level, through the real detector and the wake stage's checks;
//  - the wake clips at other levels, over silence, a room's floor and a gain stage (wake/level.ts).
// Asked for by name only: hours of ordinary speech (BENCH_ONLY=prose, wake/prose.ts) and a
// denoiser ahead of the detector (BENCH_ONLY=denoise, wake/denoise.ts).
// Cost: listening paced in real time at 20 ms frames (the speech detector alone, then the wake
// stage on each runtime), in a quiet room and in one where someone always talks, CPU and RSS, and
// again inside a cgroup of 10 % of one core.
// TTS speech is not a human in a room: these figures test the plumbing and noise robustness.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { PRETRAINED } from '../src/adapters/openwakeword/model-files.js'
import { COARSE_HOP } from '../src/app/wake-detector.js'
import { VoicedHistory } from '../src/audio/voiced-history.js'
import { DEFAULT_WAKE_PRE_ROLL_MS, WakeOnset } from '../src/audio/wake-onset.js'
import { silentLogger } from '../src/core/logger.js'
import type { WakeDetection } from '../src/ports/wake-word.js'
import { confirmsWake, DEFAULT_CONFIRM_PHRASES } from '../src/voice/wake-confirmation.js'
import { makeCpuQuota } from '../test/helpers/cpu-quota.js'
import { MODEL_DIR, pinnedDetector } from '../test/helpers/wake.js'
import { machineLine, quantile } from './machine.js'
import { coarseBench } from './wake/coarse.js'
import {
  bed,
  bytes,
  concat,
  mix,
  mixUnder,
  NEAR_MISSES,
  noiseConditions,
  nonWakeStream,
  REPLIES,
  rms,
  type Spoken,
  utterance,
  voices,
  WAKE_PHRASES,
} from './wake/corpus.js'
import { denoiseBench } from './wake/denoise.js'
import { levelBench } from './wake/level.js'
import { offsetBench } from './wake/offset.js'
import { proseBench } from './wake/prose.js'
import { replay } from './wake/replay.js'
import { heardText } from './wake/transcript.js'
import { verifierBench } from './wake/verifier.js'

const only = process.env.BENCH_ONLY ?? ''
// Smaller runs for a loaded machine: how many voices read the non-wake speech (default all 21),
// whether it is heard again over music and noise, and which noise conditions the wake clips get.
const negVoices = Number(process.env.WAKE_BENCH_VOICES ?? 0) || undefined
const noisyToo = process.env.WAKE_BENCH_NOISY !== '0'
const conditionsWanted = process.env.WAKE_BENCH_CONDITIONS?.split(',')
const RATE = 16_000
const HEADS = PRETRAINED.map((h) => ({ ...h, file: join(MODEL_DIR, h.file) }))
const out = (s: string) => process.stdout.write(`${s}\n`)

async function detector(
  onWake: (w: WakeDetection) => void,
  onScores?: (s: readonly number[]) => void,
) {
  return pinnedDetector({
    onWake,
    phrases: HEADS.map((h) => ({ phrase: h.name, file: h.file, threshold: 0.5 })),
    onScores,
    // WAKE_COARSE_HOP=4: the accuracy figures as the service scores (1, the default: every chunk).
    coarseHop: Number(process.env.WAKE_COARSE_HOP ?? 1),
  })
}

/** The utterance being said (or just said) when a chunk ending at `atMs` fired. */
function saidAt(timeline: readonly Spoken[], atMs: number): string {
  let best: Spoken | undefined
  for (const u of timeline) {
    if ((u.from / RATE) * 1000 > atMs) break
    best = u
  }
  return best?.text ?? ''
}

/**
 * What confirms a wake of each head: the default list for hey_jarvis, the phrase itself for the
 * others (a household listening for "alexa" lists "alexa").
 */
function confirmPhrases(head: string): readonly string[] {
  if (head === 'hey_jarvis') return DEFAULT_CONFIRM_PHRASES
  return [HEADS.find((h) => h.name === head)?.phrase ?? head]
}

async function falseWakes(): Promise<void> {
  const vs = voices().slice(0, negVoices)
  out(`voices: ${vs.length} (${vs.map((v) => v.name).join(', ')})`)
  const t0 = performance.now()
  const { stream: clean, timeline } = nonWakeStream(vs)
  const makeS = (performance.now() - t0) / 1000
  const streams: [string, Int16Array][] = [['clean', clean]]
  if (noisyToo) {
    const music = bed('music', 60)
    const pink = bed('pink', 60)
    const half = Math.floor(clean.length / 2)
    const noisy = concat([
      mix(clean.subarray(0, half), music, 10),
      mix(clean.subarray(half), pink, 10, 12_345),
    ])
    streams.push(['over music and pink noise, 10 dB', noisy])
  }
  const all = { hours: 0, wakes: 0, confirmed: 0 }
  const causes = new Map<string, number>()
  for (const [name, stream] of streams) {
    const hours = stream.length / RATE / 3600
    const scores = HEADS.map(() => new Float32Array(Math.ceil(stream.length / 1280) + 1))
    let c = 0
    const wakes: WakeDetection[] = []
    const d = await detector(
      (w) => wakes.push(w),
      (s) => {
        s.forEach((v, i) => {
          const a = scores[i]
          if (a) a[c] = v
        })
        c++
      },
    )
    const cpu = process.cpuUsage()
    const t = performance.now()
    await d.scoreRecorded(bytes(stream))
    const wallS = (performance.now() - t) / 1000
    const used = process.cpuUsage(cpu)
    await d.close()
    const peak = scores.map((s) => Math.max(...s.subarray(0, c)))
    out(
      `\nnon-wake speech, ${name}: ${(hours * 60).toFixed(1)} min (${timeline.length} utterances; made in ${makeS.toFixed(0)} s), scored in ${wallS.toFixed(0)} s (${((used.user + used.system) / 1000 / (hours * 3600)).toFixed(1)} ms CPU per audio second)`,
    )
    out(
      `| head | peak score | wakes/h at 0.5 ×2 (default, the detector itself) | replayed: 0.5 ×1 | 0.3 ×2 | 0.5 ×2 | 0.7 ×2 | 0.9 ×2 | confirmed by the second opinion (perfect transcriber) |`,
    )
    out('|---|---|---|---|---|---|---|---|---|')
    const settings = [
      [0.5, 1],
      [0.3, 2],
      [0.5, 2],
      [0.7, 2],
      [0.9, 2],
    ].map(([th, n]) =>
      replay(
        scores.map((s) => s.subarray(0, c)),
        th as number,
        n as number,
      ),
    )
    // The second opinion hears the pre-roll (the 2 s before the wake) and the 1.5 s after it.
    const confirmed = wakes.filter((w) => {
      const heard = heardText(timeline, w.heardAtMs - DEFAULT_WAKE_PRE_ROLL_MS, w.heardAtMs + 1500)
      const yes = confirmsWake(heard, confirmPhrases(w.phrase))
      if (yes) out(`confirmed: ${w.phrase} at ${(w.heardAtMs / 1000).toFixed(1)} s on "${heard}"`)
      return yes
    })
    for (const w of wakes) {
      const key = `${w.phrase} ← "${saidAt(timeline, w.heardAtMs - 200)}"`
      causes.set(key, (causes.get(key) ?? 0) + 1)
    }
    HEADS.forEach((h, i) => {
      const real = wakes.filter((w) => w.phrase === h.name).length
      const conf = confirmed.filter((w) => w.phrase === h.name).length
      out(
        `| ${h.name} | ${peak[i]?.toFixed(3)} | ${(real / hours).toFixed(2)} (${real}) | ${settings.map((s) => `${((s[i] ?? 0) / hours).toFixed(2)}`).join(' | ')} | ${conf} (${(conf / hours).toFixed(2)}/h) |`,
      )
    })
    all.hours += hours
    all.wakes += wakes.length
    all.confirmed += confirmed.length
  }
  out(
    `\nall non-wake speech: ${(all.hours * 60).toFixed(1)} min, ${all.wakes} local wakes (${(all.wakes / all.hours).toFixed(2)}/h, every head), ${all.confirmed} confirmed = spoken replies (${(all.confirmed / all.hours).toFixed(2)}/h)`,
  )
  out('what the local wakes fired on (the utterance said when the chunk 200 ms before ended):')
  for (const [cause, n] of [...causes].sort((a, b) => b[1] - a[1])) out(`  ${n} × ${cause}`)
  out('\nthe matcher on the near-miss phrases as text (a transcriber that hears them right):')
  const caught = NEAR_MISSES.filter((p) =>
    HEADS.some((h) => confirmsWake(p, confirmPhrases(h.name))),
  )
  out(
    `  confirmed: ${caught.length} of ${NEAR_MISSES.length}${caught.length ? ` (${caught.join(', ')})` : ''}`,
  )
}

/**
 * Self-wakes: the speaker's own replies (REPLIES, every voice) looped back into the capture at
 * the level test/voice/wake-barge-in.test.ts uses (played at −14 dBFS, 18 dB of coupling: −32
 * dBFS at the microphone) over quiet room noise, through the real detector and the wake stage's
 * own checks (the speech detector agreeing, louder than the echo while the speaker plays).
 */
async function selfWakes(): Promise<void> {
  // 18 dB of coupling is the barge-in test's; 6 dB is a microphone array sitting on the speaker.
  for (const coupling of [18, 6]) await selfWakesAt(coupling)
}

async function selfWakesAt(couplingDb: number): Promise<void> {
  const vs = voices()
  const pieces: Int16Array[] = []
  const playing: [number, number][] = []
  let at = 0
  let k = 0
  for (const v of vs) {
    for (const [i, text] of REPLIES.entries()) {
      const u = utterance(v, text, `reply-${v.name}-${i}`)
      const gain = 10 ** ((-14 - couplingDb - dbfs(u)) / 20)
      const echo = new Int16Array(u.length)
      for (let j = 0; j < u.length; j++) echo[j] = Math.round((u[j] ?? 0) * gain)
      const g = new Int16Array((RATE * (200 + ((k++ * 211) % 600))) / 1000)
      playing.push([at, at + u.length])
      at += u.length + g.length
      pieces.push(echo, g)
    }
  }
  const stream = concat(pieces)
  let seed = 7
  for (let i = 0; i < stream.length; i++) {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff
    stream[i] = Math.max(-32768, Math.min(32767, (stream[i] ?? 0) + (seed % 60) - 30))
  }
  const hours = stream.length / RATE / 3600
  let captureNow = 0
  const clock = { now: () => captureNow, setTimeout: () => ({ id: 0 }), clearTimeout() {} }
  // The speaker counts as audible from a reply's start to 500 ms after its end.
  let p = 0
  const audible = () => {
    const s = (captureNow / 1000) * RATE
    while (p < playing.length && (playing[p]?.[1] ?? 0) + RATE / 2 < s) p++
    const r = playing[p]
    return r !== undefined && s >= r[0]
  }
  const raw: WakeDetection[] = []
  const stood: WakeDetection[] = []
  const logs: string[] = []
  const logger = {
    ...silentLogger,
    info: (o: unknown) => {
      const why = (o as { why?: string })?.why
      if (why) logs.push(why)
    },
  } as unknown as typeof silentLogger
  let onset: WakeOnset | undefined
  const d = await detector((w) => {
    raw.push(w)
    onset?.detected(w)
  })
  onset = new WakeOnset({
    detector: d,
    voiced: await VoicedHistory.create(),
    clock,
    logger,
    sampleRateHz: RATE,
    speakerAudible: audible,
  })
  onset.listen((o) => {
    if (o.wake) stood.push(o.wake)
  })
  const pcm = bytes(stream)
  const frame = (RATE / 50) * 2
  for (let i = 0, n = 0; i + frame <= pcm.length; i += frame, n++) {
    captureNow += 20
    onset.room(pcm.subarray(i, i + frame), captureNow)
    if (n % 10 === 9) await d.settled()
  }
  await d.settled()
  await onset.close()
  const count = (why: string) => logs.filter((l) => l === why).length
  out(
    `\nself-wakes: the speaker's own replies looped back at ${-14 - couplingDb} dBFS (played at −14, ${couplingDb} dB of coupling), ${REPLIES.length} replies × ${vs.length} voices, ${(hours * 60).toFixed(1)} min`,
  )
  out('| | wakes | per hour |')
  out('|---|---|---|')
  out(`| the detector fired (every head) | ${raw.length} | ${(raw.length / hours).toFixed(2)} |`)
  out(`| … rejected: no speech | ${count('no speech')} | |`)
  out(`| … rejected: no louder than the echo | ${count('own voice')} | |`)
  out(
    `| **stood (a barge-in: the reply cut)** | ${stood.length} | ${(stood.length / hours).toFixed(2)} |`,
  )
  for (const w of stood)
    out(`  stood: ${w.phrase} ${w.score.toFixed(2)} at ${(w.heardAtMs / 1000).toFixed(1)} s`)
}

function dbfs(x: Int16Array): number {
  return 20 * Math.log10(rms(x) / 32768 + 1e-12)
}

async function missedWakes(): Promise<void> {
  const vs = voices([130, 150, 170, 190])
  const conditions = noiseConditions()
  const clips = WAKE_PHRASES.flatMap((p) =>
    vs.map((v) => ({
      head: p.head,
      voice: v.name,
      pcm: utterance(v, p.text, `wake-${p.head}-${v.name}`),
    })),
  )
  out(
    `\nwake clips: ${clips.length} (${WAKE_PHRASES.map((p) => `"${p.text}"`).join(', ')} × ${vs.length} voices), 1 s either side`,
  )
  let woke: WakeDetection[] = []
  let clock = 0
  // Each clip's own head's scores, for the replay at the sensitivity's other thresholds.
  let clipScores: number[][] = []
  const d = await detector(
    (w) => woke.push(w),
    (s) => clipScores.push([...s]),
  )
  const replayAt = [0.3, 0.5, 0.7, 0.9]
  out(
    `| condition | missed, hey_jarvis | missed, alexa | all | wrong phrase | latency p50 / p90 / max (ms) | replayed, missed hey_jarvis / alexa at ${replayAt.join(' / ')} |`,
  )
  out('|---|---|---|---|---|---|---|')
  for (const [name, noise, snr] of conditions.filter(
    ([n]) => !conditionsWanted || conditionsWanted.includes(n),
  )) {
    const missed: Record<string, number> = { hey_jarvis: 0, alexa: 0 }
    const missedAt = replayAt.map(() => ({ hey_jarvis: 0, alexa: 0 }) as Record<string, number>)
    let wrong = 0
    const latencies: number[] = []
    for (const [ci, clip] of clips.entries()) {
      const lead = new Int16Array(RATE)
      const padded = concat([lead, clip.pcm, new Int16Array(RATE)])
      // Noise over the whole clip, its level set against the phrase alone.
      const heard = noise
        ? mixUnder(padded, clip.pcm, noise, snr, (ci * 7919) % noise.length)
        : padded
      d.reset()
      woke = []
      clipScores = []
      // Capture time runs on across clips, as it does on a device (the refractory time is kept).
      const startMs = clock
      clock = await d.scoreRecorded(bytes(heard), startMs)
      clock += 10_000
      const right = woke.find((w) => w.phrase === clip.head)
      if (!right) missed[clip.head] = (missed[clip.head] ?? 0) + 1
      // Two chunks in a row at or above θ: the clip fires at θ when this is ≥ θ.
      const h = HEADS.findIndex((x) => x.name === clip.head)
      let held = 0
      for (let c = 1; c < clipScores.length; c++) {
        held = Math.max(held, Math.min(clipScores[c - 1]?.[h] ?? 0, clipScores[c]?.[h] ?? 0))
      }
      replayAt.forEach((th, k) => {
        const m = missedAt[k] as Record<string, number>
        if (held < th) m[clip.head] = (m[clip.head] ?? 0) + 1
      })
      if (woke.some((w) => w.phrase !== clip.head)) wrong++
      if (right)
        latencies.push(right.heardAtMs - startMs - ((RATE + clip.pcm.length) / RATE) * 1000)
    }
    const per = clips.length / WAKE_PHRASES.length
    const sorted = latencies.sort((a, b) => a - b)
    const total = (missed.hey_jarvis ?? 0) + (missed.alexa ?? 0)
    out(
      `| ${name} | ${pct(missed.hey_jarvis ?? 0, per)} | ${pct(missed.alexa ?? 0, per)} | ${pct(total, clips.length)} | ${wrong} | ${quantile(sorted, 0.5).toFixed(0)} / ${quantile(sorted, 0.9).toFixed(0)} / ${(sorted.at(-1) ?? Number.NaN).toFixed(0)} | ${missedAt.map((m) => `${m.hey_jarvis} / ${m.alexa}`).join(' · ')} (of ${per} each) |`,
    )
  }
  await d.close()
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} % (${n}/${of})`

/** One idle child: `room` quiet or talk; `hint` false scores every chunk (no quiet chunks left out). */
function idle(
  wake: string,
  o: { quota?: string | undefined; room?: 'quiet' | 'talk'; hint?: boolean } = {},
): Record<string, number | string> | string {
  const child = join(import.meta.dirname, 'wake', 'idle-child.ts')
  const cmd = `${o.quota ? `${o.quota} ` : 'exec '}${process.execPath} --import tsx ${child}`
  const r = spawnSync('sh', ['-c', cmd], {
    env: {
      ...process.env,
      WAKE: wake,
      ROOM: o.room ?? 'quiet',
      HINT: o.hint === false ? 'none' : 'vad',
      MODEL_DIR,
      SECONDS_PACED: process.env.SECONDS_PACED ?? '30',
    },
    encoding: 'utf8',
    timeout: 180_000,
  })
  const line = r.stdout.trim().split('\n').at(-1) ?? ''
  try {
    return JSON.parse(line) as Record<string, number | string>
  } catch {
    return `failed (${r.status}): ${r.stderr.slice(-300)}`
  }
}

function cost(): void {
  out('\nlistening paced in real time at 20 ms frames, one process each; a quiet room (synthetic')
  out('noise) or one where someone always talks (the VAD fixtures’ speech, looped). "every chunk":')
  out('the detector not told when no voice is near (as before quiet chunks were left out):')
  out(
    '| variant | CPU ms/s | RSS before → loaded → end (MB) | of it the process’s own, added (MB) | load ms | scoring lag p50 / p99 / max (ms) | chunks scored / quiet / dropped |',
  )
  out('|---|---|---|---|---|---|---|')
  const row = (label: string, r: Record<string, number | string> | string) =>
    out(
      typeof r === 'string'
        ? `| ${label} | ${r} |`
        : `| ${label} | ${r.cpuMsPerS} | ${r.rssBeforeMb} → ${r.rssLoadedMb} → ${r.rssEndMb} | +${(Number(r.anonEndMb) - Number(r.anonBeforeMb)).toFixed(1)} | ${r.loadMs} | ${r.lagP50Ms} / ${r.lagP99Ms} / ${r.lagMaxMs} | ${r.scored} / ${r.quiet} / ${r.dropped} |`,
    )
  row('speech detector alone (speech mode), quiet room', idle('none'))
  for (const wake of ['native', 'wasm']) {
    row(`wake stage (${wake}), quiet room`, idle(wake))
    row(`wake stage (${wake}), quiet room, every chunk`, idle(wake, { hint: false }))
    row(`wake stage (${wake}), talk`, idle(wake, { room: 'talk' }))
  }
  const q = makeCpuQuota('nocturn-wake-bench', 10)
  if (typeof q === 'string') {
    out(`10 % of one core: not measured (${q})`)
    return
  }
  try {
    for (const wake of ['native', 'wasm']) {
      row(`… inside 10 % of one core (${wake}), quiet room`, idle(wake, { quota: q.enter }))
      row(`… inside 10 % of one core (${wake}), talk`, idle(wake, { quota: q.enter, room: 'talk' }))
    }
  } finally {
    q.remove()
  }
}

out(`# wake word · ${machineLine()}`)
if (only === '' || only === 'accuracy' || only === 'false') await falseWakes()
if (only === '' || only === 'accuracy' || only === 'missed') await missedWakes()
if (only === '' || only === 'accuracy' || only === 'level') await levelBench(out)
if (only === 'prose') await proseBench(out)
if (only === '' || only === 'accuracy' || only === 'self') await selfWakes()
if (only === '' || only === 'cost') cost()
if (only === '' || only === 'verifier') await verifierBench(out)
// A trial, not the product: only when asked for.
if (only === 'denoise') await denoiseBench(out)
if (only === '' || only === 'coarse') await coarseBench(out, COARSE_HOP)
// The embedding model streamed against run whole, at the service's hop and at every chunk.
if (only === 'streamed') for (const hop of [COARSE_HOP, 1]) await coarseBench(out, hop, true)
if (only === '' || only === 'offset') await offsetBench(out)
