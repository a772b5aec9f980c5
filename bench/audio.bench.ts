// The speaker on a device that plays in real time (a PulseAudio null sink, heard through its
// monitor), with sample-counter audio so every sample heard is identified:
//  1. gaps over long speech-like playback, Nocturn's paced speaker on aplay and on naudiodon beside
//     the naive player (one long-lived aplay fed everything at once), each on its own sink, idle
//     and with two CPU hogs the bench starts and stops itself;
//  2. stale audio after a drop at varied points, beside the killed-player floor, and whether the
//     next reply starts whole;
//  3. CPU of the audio path (capture → VAD, downlink → speaker) beside `arecord | cat` + `aplay`
//     with the same device buffer sizes, and with aplay's defaults.
// Durations are parameters: BENCH_PLAY_S (per phase, 300), BENCH_DROPS (30), BENCH_CPU_S (60);
// BENCH_ONLY=gaps|drops|cpu runs one part; BENCH_QUOTA_PCT adds a slow board's speaker to the gap
// runs. BENCH_VOLUME=<percent> puts the volume's gain stage (src/audio/gain-out.ts) in front of
// Nocturn's speakers, as the appliance has it: at 100 % in the gap runs (the sample counter must
// reach the sink unscaled, and 100 % is the default), at the given volume in the drops and the CPU
// part. BENCH_FEED=stream feeds the CPU part's reply in 100 ms chunks at twice real time, as a live
// model streams it (so the gain stage's work falls inside the measured window), instead of at once. Needs pulseaudio, pulseaudio-utils, libasound2-plugins and alsa-utils (Debian); naudiodon
// is measured when it is installed.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { createAlsaSpeaker } from '../src/adapters/alsa/alsa-speaker.js'
import {
  DEFAULT_BUFFER_TIME_US,
  DEFAULT_PERIOD_TIME_US,
} from '../src/adapters/alsa/aplay-device.js'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { DEFAULT_LEAD_MS, DEFAULT_TICK_MS } from '../src/audio/paced-speaker.js'
import { silentLogger } from '../src/core/logger.js'
import type { AudioOut } from '../src/ports/audio.js'
import { type CpuQuota, makeCpuQuota } from '../test/helpers/cpu-quota.js'
import { counterReply, countGaps, firstHeardFrom } from './audio/counter.js'
import { Monitor, nowMs, staleAfter } from './audio/monitor.js'
import { pacedDeviceAvailable, startPacedDevice } from './audio/paced-device.js'
import { machineLine, quantile } from './machine.js'

const RATE = 24_000
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const PLAY_S = Number(process.env.BENCH_PLAY_S ?? 300)
const DROPS = Number(process.env.BENCH_DROPS ?? 30)
const PA_LEAD = process.env.BENCH_PA_LEAD_MS ? Number(process.env.BENCH_PA_LEAD_MS) : undefined
const PA_TICK = process.env.BENCH_PA_TICK_MS ? Number(process.env.BENCH_PA_TICK_MS) : undefined
const PA_FEED = process.env.BENCH_PA_FEED?.split('/').map(Number)
const CPU_S = Number(process.env.BENCH_CPU_S ?? 60)
const ONLY = process.env.BENCH_ONLY ?? ''
const VOLUME = process.env.BENCH_VOLUME ? Number(process.env.BENCH_VOLUME) : undefined
const FEED = process.env.BENCH_FEED ?? 'once'
// Imported only when asked for: the code from before the volume has no gain stage to import.
const gainStage = VOLUME === undefined ? undefined : await import('../src/audio/gain-out.js')
/** Nocturn's speaker behind the gain stage at `percent` (BENCH_VOLUME), or as it is without it. */
function withGain(speaker: AudioOut, percent: number | undefined = VOLUME): AudioOut {
  return gainStage && percent !== undefined
    ? new gainStage.GainOut(speaker, () => percent)
    : speaker
}
/** The drops' gain on the counter samples: firstHeardFrom's index is read back through it. */
const dropGain = gainStage && VOLUME !== undefined ? gainStage.gainOf(VOLUME) : 1
// BENCH_PA_ONLY=1: only the naudiodon speaker in the gap runs, and only it beside the floor in the
// drops (shorter runs while working on that backend).
const PA_ONLY = Boolean(process.env.BENCH_PA_ONLY)
const clock = realClock()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
// The sink renders in quanta of the monitor's latency: a stream starting mid-quantum shows up to
// one quantum clipped at its start. 5 ms keeps that small without 1 ms wake-ups for minutes.
const MONITOR_MS = Number(process.env.BENCH_MONITOR_MS ?? 5)
const CHUNK = (RATE * 2) / 10 // the model's 100 ms chunks

/** A seeded generator, so every run plays the same schedule. */
function rng(seed: number) {
  let s = seed
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    return s / 0x7fffffff
  }
}

interface Player {
  readonly name: string
  write(c: Uint8Array): void
  /** The voice driver's word that the reply is complete (generationComplete). */
  endOfReply?(): void
  close(): Promise<void>
}

function naivePlayer(env: NodeJS.ProcessEnv, pcm: string): Player & { child: ChildProcess } {
  const child = spawn(
    'aplay',
    ['-q', '-D', pcm, '-t', 'raw', '-f', 'S16_LE', '-r', String(RATE), '-c', '1', '-'],
    { env, stdio: ['pipe', 'ignore', 'ignore'] },
  )
  child.stdin?.on('error', () => {})
  return {
    name: 'naive: one aplay (default 500 ms buffer), fed at once',
    child,
    write: (c) => child.stdin?.write(c),
    async close() {
      const gone = new Promise((r) => child.once('exit', r))
      child.kill('SIGKILL')
      await gone
    },
  }
}

function pacedPlayer(name: string, speaker: AudioOut): Player & { speaker: AudioOut } {
  return {
    name,
    speaker,
    write: (c) => speaker.write(c),
    endOfReply: () => speaker.endOfReply(),
    close: () => speaker.close(),
  }
}

/**
 * Speech-like playback: replies of 2–12 s, each handed over in 100 ms chunks at twice real time
 * (as a Live model streams) and closed by the model's end-of-reply word, with 0.3–2 s between
 * replies, until `seconds` have been scheduled.
 */
async function playSchedule(
  players: readonly Player[],
  seconds: number,
): Promise<{ lengths: number[]; startedAt: number[] }> {
  const rand = rng(42)
  const lengths: number[] = []
  const startedAt: number[] = [] // when each reply's first chunk was written (nowMs)
  const end = performance.now() + seconds * 1000
  while (performance.now() < end) {
    const n = Math.round((2 + rand() * 10) * RATE)
    lengths.push(n)
    const reply = counterReply(n)
    const start = performance.now()
    startedAt.push(nowMs())
    for (let at = 0, k = 0; at < reply.byteLength; at += CHUNK, k++) {
      const c = reply.subarray(at, at + CHUNK)
      for (const p of players) p.write(c)
      await sleep(Math.max(0, start + k * 50 + 50 - performance.now()))
    }
    // The model's generationComplete after its last chunk, as the voice driver passes it on.
    for (const p of players) p.endOfReply?.()
    // Wait for the reply to finish playing, then the pause before the next one.
    await sleep(Math.max(0, start + (n / RATE) * 1000 - performance.now()) + 300 + rand() * 1700)
  }
  return { lengths, startedAt }
}

/**
 * The paced speaker in a process of its own (bench/audio/speaker-child.mjs), optionally inside a
 * cgroup limited to `quotaPct` % of one core: a slow board's speaker, heard by a monitor that is
 * not slowed down with it.
 */
async function childPlayer(
  name: string,
  pcm: string,
  quotaPct: number | undefined,
): Promise<Player & { quotaDir?: string }> {
  const hasDist = existsSync(join(ROOT, 'dist/adapters/alsa/alsa-speaker.js'))
  const node = [
    process.execPath,
    ...(hasDist ? [] : ['--import', 'tsx']),
    join(ROOT, 'bench/audio/speaker-child.mjs'),
  ]
  let quota: CpuQuota | undefined
  if (quotaPct !== undefined) {
    const q = makeCpuQuota('nocturn-bench-speaker', quotaPct)
    if (typeof q === 'string') throw new Error(`BENCH_QUOTA_PCT: ${q}`)
    quota = q
  }
  const child = spawn('sh', ['-c', `${quota ? quota.enter : 'exec'} ${node.join(' ')}`], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {
      ...process.env,
      NOCTURN_BENCH_SPEAKER: JSON.stringify({ base: hasDist ? 'dist' : 'src', playback: pcm }),
    },
  })
  await new Promise((resolve) => child.stdout?.once('data', resolve))
  const frame = (c: Uint8Array) => {
    const head = Buffer.alloc(4)
    head.writeUInt32LE(c.byteLength)
    child.stdin?.write(head)
    if (c.byteLength > 0) child.stdin?.write(c)
  }
  return {
    name,
    write: frame,
    endOfReply: () => frame(new Uint8Array(0)),
    async close() {
      const gone = new Promise((r) => child.once('exit', r))
      child.stdin?.end()
      await gone
      quota?.remove()
    },
  }
}

function hogs(n: number): ChildProcess[] {
  return Array.from({ length: n }, () =>
    spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }),
  )
}

async function stopAll(children: readonly ChildProcess[]) {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue
    const gone = new Promise((r) => c.once('exit', r))
    c.kill('SIGKILL')
    await gone
  }
}

function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return 0
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(f[11]) + Number(f[12])) * 10 // utime + stime, 10 ms ticks
  } catch {
    return Number.NaN
  }
}

const fmt = (xs: readonly number[]) =>
  xs.length === 0
    ? '—'
    : `${xs.length}: ${[...xs]
        .sort((a, b) => a - b)
        .map((x) => x.toFixed(1))
        .join(', ')}`

/** `median / max` of sorted values. */
const medianMax = (xs: readonly number[]) =>
  xs.length === 0 ? '—' : `${quantile(xs, 0.5).toFixed(1)} / ${(xs.at(-1) as number).toFixed(1)}`

console.log(machineLine())
const unavailable = pacedDeviceAvailable()
if (unavailable) {
  console.log(
    `skipped: no paced device (${unavailable}); install pulseaudio pulseaudio-utils libasound2-plugins alsa-utils`,
  )
  process.exit(0)
}
// BENCH_VARIANT=<lead ms>/<tick ms>/<aplay buffer ms>[/<period ms>] adds a fourth player: the paced aplay with
// other sizes, on its own sink, in the gap runs.
const VARIANT = process.env.BENCH_VARIANT?.split('/').map(Number)
const sinks = ['s_paced', 's_naive', 's_pa', 's_variant', 's_quota']
// BENCH_QUOTA_PCT=<percent> adds a player: the paced speaker in its own process, in a cgroup with
// that CPU quota (a slow board: 10 stands for a Zero 2 W, bench/RESULTS.md), on its own sink.
const QUOTA_PCT = process.env.BENCH_QUOTA_PCT ? Number(process.env.BENCH_QUOTA_PCT) : undefined
const pulse = await startPacedDevice(sinks)
// PortAudio reads ALSA's configuration once, from the environment of this process.
Object.assign(process.env, pulse.env)
const env = pulse.env
let paSpeaker: typeof import('../src/adapters/portaudio/portaudio-speaker.js') | undefined
try {
  const { loadNaudiodon } = await import('../src/adapters/portaudio/naudiodon.js')
  loadNaudiodon()
  paSpeaker = await import('../src/adapters/portaudio/portaudio-speaker.js')
} catch (e) {
  console.log(`naudiodon not available: ${(e as Error).message}`)
}
console.log(
  `aplay: lead ${DEFAULT_LEAD_MS} ms, tick ${DEFAULT_TICK_MS} ms, buffer ${DEFAULT_BUFFER_TIME_US / 1000} ms, period ${DEFAULT_PERIOD_TIME_US / 1000} ms` +
    (paSpeaker
      ? `; naudiodon: lead ${PA_LEAD ?? paSpeaker.PORTAUDIO_LEAD_MS} ms, tick ${PA_TICK ?? paSpeaker.PORTAUDIO_TICK_MS} ms`
      : ''),
)
// Counts the hung-player watch's replacements: each one drops audio, so it would show as a gap.
let stalls = 0
const countingLogger = {
  ...silentLogger,
  warn(fields: object) {
    if ((fields as { event?: string }).event === 'speaker_stalled') stalls++
  },
  child: () => countingLogger,
}
const alsaSpeaker = (pcm: string) =>
  createAlsaSpeaker({ device: pcm, clock, logger: countingLogger, env })
const portAudioSpeaker = (pcm: string) =>
  paSpeaker?.createPortAudioSpeaker({
    device: pcm,
    clock,
    logger: silentLogger,
    leadMs: PA_LEAD,
    tickMs: PA_TICK,
    // BENCH_PA_FEED=<frames per buffer>/<ahead ms>/<feed tick ms>: other sizes for the device's feed.
    framesPerBuffer: PA_FEED?.[0],
    aheadMs: PA_FEED?.[1],
    feedTickMs: PA_FEED?.[2],
  })

try {
  // 1. Gaps over long playback, idle and loaded.
  if (!ONLY || ONLY === 'gaps') {
    for (const load of process.env.BENCH_LOADS?.split(',').map(Number) ?? [0, 2]) {
      const players: Player[] = PA_ONLY
        ? []
        : [
            pacedPlayer(
              `Nocturn paced → aplay${gainStage ? ', gain stage at 100 %' : ''}`,
              withGain(alsaSpeaker('play_s_paced').speaker, 100),
            ),
            naivePlayer(env, 'play_s_naive'),
          ]
      const pa = process.env.BENCH_NO_PA ? undefined : portAudioSpeaker('play_s_pa')
      const sinkOf = PA_ONLY ? [] : ['s_paced', 's_naive']
      if (pa) {
        players.push(
          pacedPlayer(
            `Nocturn paced → naudiodon${gainStage ? ', gain stage at 100 %' : ''}`,
            withGain(pa.speaker, 100),
          ),
        )
        sinkOf.push('s_pa')
      }
      if (QUOTA_PCT !== undefined) {
        players.push(
          await childPlayer(
            `Nocturn paced → aplay, own process at ${QUOTA_PCT} % of one core`,
            'play_s_quota',
            QUOTA_PCT,
          ),
        )
        sinkOf.push('s_quota')
      }
      if (VARIANT) {
        const [leadMs, tickMs, bufferMs, periodMs] = VARIANT as [number, number, number, number?]
        const v = createAlsaSpeaker({
          device: 'play_s_variant',
          clock,
          logger: silentLogger,
          env,
          leadMs,
          tickMs,
          bufferTimeUs: bufferMs * 1000,
          ...(periodMs !== undefined && { periodTimeUs: periodMs * 1000 }),
        })
        players.push(
          pacedPlayer(
            `variant: paced → aplay, lead ${leadMs}/tick ${tickMs}/buffer ${bufferMs}/period ${periodMs ?? DEFAULT_PERIOD_TIME_US / 1000}`,
            v.speaker,
          ),
        )
        sinkOf.push('s_variant')
      }
      const monitors = players.map((_, i) => new Monitor(env, sinkOf[i] as string, MONITOR_MS))
      await Promise.all(monitors.map((m) => m.ready()))
      await sleep(300)
      const hogging = hogs(load)
      const heardFrom = nowMs()
      const t0 = performance.now()
      const { lengths, startedAt } = await playSchedule(players, PLAY_S)
      const seconds = (performance.now() - t0) / 1000
      console.log(`hung-player replacements (speaker_stalled) during the phase: ${stalls}`)
      stalls = 0
      await stopAll(hogging)
      await sleep(500)
      const heard = await Promise.all(monitors.map((m) => m.stop()))
      await Promise.all(players.map((p) => p.close()))
      const rows: Record<string, Record<string, string | number>> = {}
      for (const [i, p] of players.entries()) {
        const h = heard[i] as { samples: Int16Array; t0: number }
        const g = countGaps(h.samples, lengths)
        // From a reply's first write to its sample 0 on the monitor (the sink's latency included).
        const delays = g.startsAt
          .map((at, k) => h.t0 + (at / RATE) * 1000 - (startedAt[k] ?? Number.NaN))
          .sort((a, b) => a - b)
        if (process.env.BENCH_DEBUG) {
          const at = g.gapsEndAt.map((x) => (h.t0 + (x / RATE) * 1000 - heardFrom).toFixed(0))
          console.log(`${p.name}: gaps end at ${at.join(', ')} ms into the phase`)
        }
        rows[p.name] = {
          'replies played / heard': `${lengths.length} / ${g.replies}`,
          gaps: g.gaps,
          'gap ms (sorted)': fmt(g.gapMs),
          'starts clipped, ms (sorted)': fmt(g.clippedStartMs),
          'start delay ms, median / max': medianMax(delays),
          'cut short': g.cutShort,
          'tail late': g.lateTails,
          rewinds: g.rewinds,
          'foreign samples': g.foreign,
        }
      }
      console.log(
        `\ngaps over ${seconds.toFixed(0)} s of speech-like playback (${lengths.length} replies, ${(lengths.reduce((a, b) => a + b, 0) / RATE).toFixed(0)} s of audio), ${load === 0 ? 'machine idle' : `${load} CPU hogs running`}:`,
      )
      console.table(rows)
    }
  }

  // 2. Stale audio after drops at varied points; the next reply must start whole.
  if (!ONLY || ONLY === 'drops') {
    const reply = counterReply(5 * RATE)
    const next = counterReply(RATE / 2)
    const pacedAlsa = PA_ONLY ? undefined : alsaSpeaker('play_s_paced').speaker
    const paced = pacedAlsa && withGain(pacedAlsa)
    const paSpeakerNow = portAudioSpeaker('play_s_pa')?.speaker
    const pa = paSpeakerNow && withGain(paSpeakerNow)
    const rand = rng(7)
    const stale: Record<string, number[]> = { paced: [], floor: [], pa: [] }
    const clipped: Record<string, number[]> = { paced: [], floor: [], pa: [] }
    const startDelay: Record<string, number[]> = { paced: [], floor: [], pa: [] }
    let floorPlayer = naivePlayer(env, 'play_s_naive')
    for (let d = 0; d < DROPS; d++) {
      const monitors = {
        paced: paced ? new Monitor(env, 's_paced') : undefined,
        floor: new Monitor(env, 's_naive'),
        pa: pa ? new Monitor(env, 's_pa') : undefined,
      }
      await Promise.all(Object.values(monitors).map((m) => m?.ready()))
      await sleep(300)
      const at = 300 + rand() * 2700 // the drop falls anywhere from 0.3 s to 3 s into the reply
      const start = nowMs()
      let barged = 0
      for (let off = 0, k = 0; off < reply.byteLength && barged === 0; off += CHUNK, k++) {
        const c = reply.subarray(off, off + CHUNK)
        paced?.write(c)
        floorPlayer.write(c)
        pa?.write(c)
        await sleep(Math.max(0, start + k * 4 + 4 - nowMs()))
      }
      await sleep(Math.max(0, start + at - nowMs()))
      // Each from its own moment: opening the next player (PortAudio's is synchronous) takes time.
      const bargedAt: Record<string, number> = {}
      bargedAt.floor = barged = nowMs()
      // The floor: the same write-through, its player killed; the next one starts at once.
      floorPlayer.child.kill('SIGKILL')
      bargedAt.paced = nowMs()
      paced?.drop()
      bargedAt.pa = nowMs()
      pa?.drop()
      floorPlayer = naivePlayer(env, 'play_s_naive')
      await sleep(300)
      const nextAt = nowMs()
      paced?.write(next)
      pa?.write(next)
      floorPlayer.write(next)
      await sleep(800)
      for (const [k, m] of Object.entries(monitors)) {
        if (!m) continue
        const heard = await m.stop()
        stale[k]?.push(staleAfter(heard, bargedAt[k] as number))
        const from = Math.floor(((nextAt - 150 - heard.t0) / 1000) * RATE)
        const first = firstHeardFrom(heard.samples, from, k === 'floor' ? 1 : dropGain)
        clipped[k]?.push(first === undefined ? Number.NaN : (first.index / RATE) * 1000)
        // From the next reply's write to its sample 0 on the monitor.
        startDelay[k]?.push(
          first === undefined
            ? Number.NaN
            : heard.t0 + ((first.at - first.index) / RATE) * 1000 - nextAt,
        )
        if (process.env.BENCH_DEBUG)
          console.log(
            `drop ${d} at ${at.toFixed(0)} ms, ${k}: stale ${stale[k]?.at(-1)?.toFixed(1)} ms, next reply missing ${clipped[k]?.at(-1)?.toFixed(1)} ms`,
          )
      }
    }
    await floorPlayer.close()
    await paced?.close()
    await pa?.close()
    const rows: Record<string, Record<string, string | number>> = {}
    const names: Record<string, string> = {
      paced: `Nocturn paced → aplay, drop (kills aplay)${gainStage ? `, gain stage at ${VOLUME} %` : ''}`,
      floor: 'floor: write-through → aplay, SIGKILL',
      pa: `Nocturn paced → naudiodon, drop${gainStage ? `, gain stage at ${VOLUME} %` : ''}`,
    }
    for (const k of Object.keys(stale)) {
      const s = (stale[k] ?? []).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b)
      if (s.length === 0) continue
      const c = (clipped[k] ?? []).sort((a, b) => a - b)
      rows[names[k] as string] = {
        drops: s.length,
        'stale median ms': +quantile(s, 0.5).toFixed(1),
        'p25–p75': `${quantile(s, 0.25).toFixed(1)}–${quantile(s, 0.75).toFixed(1)}`,
        'min–max': `${(s[0] as number).toFixed(1)}–${(s.at(-1) as number).toFixed(1)}`,
        'next reply: ms missing at its start, max': +(c.at(-1) ?? Number.NaN).toFixed(2),
        'next reply: start delay ms, median / max': medianMax(
          (startDelay[k] ?? []).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b),
        ),
      }
    }
    console.log(`\nstale audio after ${DROPS} drops at 0.3–3 s into a 5 s reply (monitor at 1 ms):`)
    console.table(rows)
  }

  // 3. CPU of the audio path vs the floor over CPU_S seconds: the path and the floor with the same
  // buffers side by side, at the same time, so the host's noise (on a VM the cost of a wake-up
  // moves with it, by up to 2× from one minute to the next) hits both alike; then the floor with
  // the tools' defaults on its own.
  if (!ONLY || ONLY === 'cpu') {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-bench-cpu-'))
    const content = counterReply((CPU_S + 5) * RATE)
    writeFileSync(join(dir, 'out.raw'), content)
    const pulseBefore = () => cpuMsOf(pulse.serverPid)
    const rows: Record<string, Record<string, number>> = {}
    const row = (nodeMs: number, kidMs: number, s: number, pulseMs: number) => ({
      'node ms/s': +(nodeMs / s).toFixed(1),
      'children ms/s': +(kidMs / s).toFixed(1),
      '% of a core': +((nodeMs + kidMs) / s / 10).toFixed(2),
      'pulse server ms/s': +(pulseMs / s).toFixed(1),
    })

    // Nocturn: arecord (frames of 20 ms) → WebRTC VAD per frame; a reply → paced speaker → aplay,
    // in a process of its own on the compiled code (bench/audio/path-child.mjs).
    const hasDist = existsSync(join(ROOT, 'dist/adapters/alsa/alsa-speaker.js'))
    if (!hasDist) console.log('dist/ missing (npm run build): the path runs the sources under tsx')
    const startPath = async () => {
      const child = spawn(
        process.execPath,
        [...(hasDist ? [] : ['--import', 'tsx']), join(ROOT, 'bench/audio/path-child.mjs')],
        {
          cwd: ROOT,
          stdio: ['pipe', 'pipe', 'inherit'],
          env: {
            ...env,
            NOCTURN_BENCH_AUDIO: JSON.stringify({
              base: hasDist ? 'dist' : 'src',
              capture: 'mon_s_naive',
              playback: 'play_s_paced',
              seconds: CPU_S + 5,
              ...(VOLUME !== undefined && { volume: VOLUME }),
              feed: FEED,
            }),
          },
        },
      )
      const ready = await new Promise<{ mic: number; aplay: number }>((resolve, reject) => {
        child.stdout?.once('data', (c: Buffer) => resolve(JSON.parse(c.toString())))
        child.once('exit', (code) => reject(new Error(`audio path child exited (${code})`)))
      })
      return {
        node: child.pid,
        kids: [ready.mic, ready.aplay],
        stop: async () => {
          const gone = new Promise((r) => child.once('exit', r))
          child.stdin?.end()
          await gone
        },
      }
    }
    // A floor: arecord | cat, and aplay reading the same audio from a file.
    const startFloor = async (recArgs: readonly string[], playArgs: readonly string[]) => {
      const cat = spawn('cat', [], { stdio: ['pipe', 'ignore', 'ignore'] })
      const rec = spawn(
        'arecord',
        ['-q', '-D', 'mon_s_naive', '-t', 'raw', '-f', 'S16_LE', '-r', '16000', '-c', '1'].concat(
          recArgs,
        ),
        { env, stdio: ['ignore', cat.stdin, 'ignore'] },
      )
      const fd = openSync(join(dir, 'out.raw'), 'r')
      const play = spawn(
        'aplay',
        ['-q', '-D', 'play_s_paced', '-t', 'raw', '-f', 'S16_LE', '-r', '24000', '-c', '1'].concat(
          playArgs,
        ),
        { env, stdio: [fd, 'ignore', 'ignore'] },
      )
      closeSync(fd)
      return {
        node: undefined,
        kids: [rec.pid, cat.pid, play.pid],
        stop: () => stopAll([play, rec, cat]),
      }
    }
    type Running = Awaited<ReturnType<typeof startPath>> | Awaited<ReturnType<typeof startFloor>>
    /** Measures what runs together over CPU_S seconds, after 1.5 s to settle; then stops them. */
    const measure = async (labelled: [string, Running][]) => {
      await sleep(1500)
      const before = labelled.map(([, r]) => [r.node, ...r.kids].map(cpuMsOf))
      const pb = pulseBefore()
      const start = performance.now()
      await sleep(CPU_S * 1000)
      const s = (performance.now() - start) / 1000
      const pulseMs = cpuMsOf(pulse.serverPid) - pb
      labelled.forEach(([label, r], i) => {
        const used = [r.node, ...r.kids].map((p, j) => cpuMsOf(p) - (before[i]?.[j] ?? 0))
        const kidMs = used.slice(1).reduce((a, b) => a + b, 0)
        rows[label] = row(used[0] ?? 0, kidMs, s, pulseMs)
      })
      for (const [, r] of labelled) await r.stop()
    }
    const sameBuffers = `floor, same buffers (arecord 20/160 ms | cat; aplay ${DEFAULT_BUFFER_TIME_US / 1000}/${DEFAULT_PERIOD_TIME_US / 1000} ms)`
    await measure([
      [
        `Nocturn audio path (node${hasDist ? '' : ' + tsx'} + arecord + aplay${VOLUME !== undefined ? `, gain stage at ${VOLUME} %` : ''}${FEED === 'stream' ? ', fed as a stream' : ''})`,
        await startPath(),
      ],
      [
        sameBuffers,
        await startFloor(
          ['--period-time=20000', '--buffer-time=160000'],
          [`--buffer-time=${DEFAULT_BUFFER_TIME_US}`, `--period-time=${DEFAULT_PERIOD_TIME_US}`],
        ),
      ],
    ])
    await measure([['floor, defaults (arecord | cat; aplay), alone', await startFloor([], [])]])
    console.log(
      `\nCPU of full-duplex audio over ${CPU_S} s (16 kHz in, 24 kHz out; the first two rows at the same time, the pulse server's figure is theirs together):`,
    )
    console.table(rows)
    const path = Object.values(rows)[0]?.['% of a core'] ?? 0
    const floor = Object.values(rows)[1]?.['% of a core'] ?? Number.NaN
    console.log(`audio path / floor with the same buffers: ${(path / floor).toFixed(2)}×`)
  }
} finally {
  await pulse.stop()
}
process.exit(0)
