// Stale audio after a barge-in, Nocturn's paced speaker vs a naive write-through into the same
// device, and CPU per second of full-duplex audio per backend. Measured on a paced device (a
// PulseAudio null sink, listened to through its monitor) when the bench can start one itself;
// otherwise from the speaker's own accounting, and the output says which.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAlsaSpeaker } from '../src/adapters/alsa/alsa-speaker.js'
import { ArecordMic } from '../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../src/adapters/clock/real-clock.js'
import { WavMic } from '../src/adapters/wav/wav-mic.js'
import { createWavSpeaker } from '../src/adapters/wav/wav-speaker.js'
import { PacedSpeaker } from '../src/audio/paced-speaker.js'
import type { SpeakerDevice } from '../src/audio/speaker-device.js'
import { wavHeader } from '../src/audio/wav.js'
import { silentLogger } from '../src/core/logger.js'
import type { AudioIn, AudioOut } from '../src/ports/audio.js'
import { Monitor, nowMs, staleAfter } from './audio/monitor.js'
import { pacedDeviceAvailable, startPacedDevice } from './audio/paced-device.js'
import { speechLike } from './audio/speech-like.js'
import { machineLine, quantile } from './machine.js'

const RATE = 24_000
const CONTENT = speechLike(5)
const CHUNK = (RATE * 2) / 10 // 100 ms
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const clock = realClock()
const LEAD_MS = Number(process.env.BENCH_LEAD_MS ?? 20)
const TICK_MS = Number(process.env.BENCH_TICK_MS ?? 5)
const ONLY = process.env.BENCH_ONLY ?? ''

/** The model hands over 50 chunks of 100 ms within 200 ms; barge-in 1 s after the first. */
async function deliver(write: (c: Uint8Array) => void, stopWriting: () => boolean) {
  for (let at = 0; at < CONTENT.byteLength; at += CHUNK) {
    if (stopWriting()) return
    write(CONTENT.subarray(at, at + CHUNK))
    await sleep(4)
  }
}

interface Case {
  name: string
  /** Pre-spawn/open the player 300 ms before t0; returns how to write and how to barge in. */
  open(): Promise<{ write(c: Uint8Array): void; bargeIn(): void; close(): Promise<void> }>
}

function pacedCase(name: string, make: () => AudioOut): Case {
  return {
    name,
    async open() {
      const speaker = make()
      return {
        write: (c) => speaker.write(c),
        bargeIn: () => {
          speaker.drop()
        },
        close: () => speaker.close(),
      }
    },
  }
}

function naiveAplay(env: NodeJS.ProcessEnv): Case {
  return {
    name: 'naive write-through → aplay (default 500 ms buffer), stop writing',
    async open() {
      const child = spawn(
        'aplay',
        ['-q', '-D', 'paplay', '-t', 'raw', '-f', 'S16_LE', '-r', '24000', '-c', '1', '-'],
        {
          env,
          stdio: ['pipe', 'ignore', 'ignore'],
        },
      )
      child.stdin.on('error', () => {})
      let stopped = false
      return {
        write: (c) => {
          if (!stopped) child.stdin.write(c)
        },
        bargeIn: () => {
          stopped = true
        },
        close: async () => {
          const gone = new Promise((r) => child.once('exit', r))
          child.kill('SIGKILL')
          await gone
        },
      }
    },
  }
}

async function measureStale(c: Case, env: NodeJS.ProcessEnv, tailMs: number) {
  const stale: number[] = []
  for (let run = 0; run < RUNS; run++) {
    const monitor = new Monitor(env)
    await monitor.ready()
    const player = await c.open()
    await sleep(300)
    const t0 = nowMs()
    let barged = 0
    const delivery = deliver(player.write, () => barged > 0)
    await sleep(1000 - (nowMs() - t0))
    barged = nowMs()
    player.bargeIn()
    await delivery
    await sleep(tailMs)
    const heard = await monitor.stop()
    await player.close()
    stale.push(staleAfter(heard, barged))
  }
  stale.sort((a, b) => a - b)
  return stale
}

/** Gaps of 1 ms or more inside a full 5 s playback, and whether a reply after a drop is whole. */
async function measureGapsAndRestart(make: () => AudioOut, env: NodeJS.ProcessEnv) {
  const monitor = new Monitor(env)
  await monitor.ready()
  const speaker = make()
  await sleep(300)
  const start = nowMs()
  await deliver(
    (c) => speaker.write(c),
    () => false,
  )
  await sleep(5300 - (nowMs() - start))
  // A drop, then a 500 ms reply: is its first syllable there?
  speaker.write(CONTENT.subarray(0, CHUNK * 5))
  await sleep(200)
  speaker.drop()
  await sleep(300)
  const replyAt = nowMs()
  speaker.write(CONTENT.subarray(0, CHUNK * 5))
  await sleep(800)
  const heard = await monitor.stop()
  await speaker.close()
  const { samples, t0 } = heard
  const idx = (ms: number) => Math.max(0, Math.floor(((ms - t0) / 1000) * RATE))
  let first = -1
  let last = -1
  for (let i = idx(start); i < idx(start + 5250) && i < samples.length; i++) {
    if (Math.abs(samples[i] as number) > 100) {
      if (first < 0) first = i
      last = i
    }
  }
  let gaps = 0
  let gapMs = 0
  let quiet = 0
  const where: number[] = []
  for (let i = first; i <= last && first >= 0; i++) {
    if (Math.abs(samples[i] as number) <= 100) {
      quiet++
      if (quiet === RATE / 1000) {
        gaps++
        where.push(Math.round(((i - first) / RATE) * 1000))
      }
    } else {
      if (quiet >= RATE / 1000) gapMs += (quiet / RATE) * 1000
      quiet = 0
    }
  }
  if (process.env.BENCH_DEBUG) console.log('gaps at ms', where.join(' '))
  let heardReply = 0
  for (let i = idx(replyAt); i < samples.length; i++)
    if (Math.abs(samples[i] as number) > 100) heardReply++
  return { gaps, gapMs, replyHeardMs: (heardReply / RATE) * 1000 }
}

function childCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(f[11]) + Number(f[12])) * 10 // utime + stime, in 10 ms ticks
  } catch {
    return 0
  }
}

/** CPU per second of audio with the microphone capturing and the speaker playing for 5 s. */
async function measureCpu(mic: AudioIn, out: AudioOut, children: () => (number | undefined)[]) {
  let frames = 0
  await mic.start({ frame: () => frames++, error: () => {} })
  await sleep(2000) // the pulse monitor takes 1–2 s to start delivering
  const before = process.cpuUsage()
  const childBefore = children().map(childCpuMs)
  const start = nowMs()
  for (let at = 0; at < CONTENT.byteLength; at += CHUNK) out.write(CONTENT.subarray(at, at + CHUNK))
  await sleep(5000)
  const seconds = (nowMs() - start) / 1000
  const used = process.cpuUsage(before)
  const childMs = children()
    .map(childCpuMs)
    .reduce((a, b, i) => a + b - (childBefore[i] ?? 0), 0)
  await mic.stop()
  await out.close()
  const nodeMs = (used.user + used.system) / 1000
  return { nodeMsPerS: nodeMs / seconds, childMsPerS: childMs / seconds, frames }
}

const line = machineLine()
console.log(line)
const unavailable = process.env.BENCH_NO_PULSE ? 'BENCH_NO_PULSE is set' : pacedDeviceAvailable()
if (unavailable) {
  // No paced device: the speaker's own accounting. Stale = what the device held at the drop.
  console.log(`paced device unavailable (${unavailable}): figures from the speaker's accounting`)
  let fed = 0
  const counting: SpeakerDevice = {
    write: (c) => {
      fed += c.byteLength
    },
    silence() {},
    async close() {},
  }
  const s = new PacedSpeaker({ device: counting, sampleRateHz: RATE, clock })
  for (let at = 0; at < CONTENT.byteLength; at += CHUNK) s.write(CONTENT.subarray(at, at + CHUNK))
  await sleep(1000)
  const played = s.playedMs()
  const heldMs = (fed / 2 / RATE) * 1000 - played
  s.drop()
  // Without a kill, what the device holds at the drop is what still plays; naive hands it all.
  console.table({
    'paced (accounting): held by the device at drop': { ms: +heldMs.toFixed(1) },
    'naive write-through (accounting): held downstream at drop': {
      ms: +(5000 - played).toFixed(1),
    },
  })
  await s.close()
  process.exit(0)
}

const pulse = await startPacedDevice()
// PortAudio reads ALSA's configuration once, from the environment of this process.
Object.assign(process.env, pulse.env)
const env = pulse.env
let naudiodon: typeof import('../src/adapters/portaudio/portaudio-speaker.js') | undefined
let paMic: typeof import('../src/adapters/portaudio/portaudio-mic.js') | undefined
try {
  const { loadNaudiodon } = await import('../src/adapters/portaudio/naudiodon.js')
  loadNaudiodon()
  naudiodon = await import('../src/adapters/portaudio/portaudio-speaker.js')
  paMic = await import('../src/adapters/portaudio/portaudio-mic.js')
} catch (e) {
  console.log(`naudiodon not available: ${(e as Error).message}`)
}

try {
  const alsaSpeaker = () =>
    createAlsaSpeaker({
      device: 'paplay',
      clock,
      logger: silentLogger,
      env,
      leadMs: LEAD_MS,
      tickMs: TICK_MS,
    }).speaker
  const paSpeaker = naudiodon
    ? () =>
        naudiodon!.createPortAudioSpeaker({
          device: 'paplay',
          clock,
          logger: silentLogger,
          leadMs: LEAD_MS,
          tickMs: TICK_MS,
        }).speaker
    : undefined
  const cases: [Case, number][] = [
    [pacedCase('Nocturn paced speaker → aplay (lead 20 ms), drop', alsaSpeaker), 400],
    [naiveAplay(env), 4600],
  ]
  if (paSpeaker)
    cases.push([pacedCase('Nocturn paced speaker → naudiodon (lead 20 ms), drop', paSpeaker), 400])
  const rows: Record<string, Record<string, number | string>> = {}
  for (const [c, tail] of cases) {
    if (ONLY && ONLY !== 'quality') continue
    const s = await measureStale(c, env, tail)
    rows[c.name] = {
      runs: s.length,
      'stale min ms': +(s[0] ?? Number.NaN).toFixed(1),
      'stale median ms': +quantile(s, 0.5).toFixed(1),
      'stale max ms': +(s.at(-1) ?? Number.NaN).toFixed(1),
    }
  }
  console.log(
    '\nstale audio after barge-in, measured on the paced device (PulseAudio null sink monitor):',
  )
  console.table(rows)

  const quality: Record<string, Record<string, number>> = {}
  const g = await measureGapsAndRestart(alsaSpeaker, env)
  quality['paced → aplay'] = {
    'gaps ≥1 ms in 5 s': g.gaps,
    'gap total ms': +g.gapMs.toFixed(1),
    'reply after drop heard ms (of 500)': +g.replyHeardMs.toFixed(1),
  }
  if (paSpeaker) {
    const p = await measureGapsAndRestart(paSpeaker, env)
    quality['paced → naudiodon'] = {
      'gaps ≥1 ms in 5 s': p.gaps,
      'gap total ms': +p.gapMs.toFixed(1),
      'reply after drop heard ms (of 500)': +p.replyHeardMs.toFixed(1),
    }
  }
  console.table(quality)

  const cpu: Record<string, Record<string, number>> = {}
  {
    const mic = new ArecordMic({ device: 'pamon', clock, logger: silentLogger, env })
    const { speaker, device } = createAlsaSpeaker({
      device: 'paplay',
      clock,
      logger: silentLogger,
      env,
    })
    const r = await measureCpu(mic, speaker, () => [mic.pid, device.pid])
    cpu['alsa (arecord + paced aplay)'] = {
      'node ms/s': +r.nodeMsPerS.toFixed(1),
      'children ms/s': +r.childMsPerS.toFixed(1),
      'total % of a core': +((r.nodeMsPerS + r.childMsPerS) / 10).toFixed(2),
    }
  }
  if (naudiodon && paMic) {
    const mic = new paMic.PortAudioMic({ device: 'pamon', clock, logger: silentLogger })
    const { speaker } = naudiodon.createPortAudioSpeaker({
      device: 'paplay',
      clock,
      logger: silentLogger,
    })
    const r = await measureCpu(mic, speaker, () => [])
    cpu['portaudio (naudiodon in and out)'] = {
      'node ms/s': +r.nodeMsPerS.toFixed(1),
      'children ms/s': 0,
      'total % of a core': +(r.nodeMsPerS / 10).toFixed(2),
    }
  }
  {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-bench-wav-'))
    const pcm16 = speechLike(10, 16_000)
    writeFileSync(join(dir, 'in.wav'), Buffer.concat([wavHeader(16_000, pcm16.byteLength), pcm16]))
    const mic = new WavMic({ path: join(dir, 'in.wav'), clock, paced: true, loop: true })
    const { speaker } = createWavSpeaker({ path: join(dir, 'out.wav'), clock })
    const r = await measureCpu(mic, speaker, () => [])
    cpu['wav (paced file in, paced file out)'] = {
      'node ms/s': +r.nodeMsPerS.toFixed(1),
      'children ms/s': 0,
      'total % of a core': +(r.nodeMsPerS / 10).toFixed(2),
    }
  }
  console.log('\nCPU per second of full-duplex audio (16 kHz in, 24 kHz out) on the paced device:')
  console.table(cpu)
} finally {
  await pulse.stop()
}
process.exit(0)
