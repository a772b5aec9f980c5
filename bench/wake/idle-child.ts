// One paced idle-listening run for wake-word.bench.ts: 20 ms frames of a room, in real time, for
// SECONDS seconds. WAKE=none: today's speech mode (the speech detector alone). Otherwise the wake
// stage as `listen.mode: wake` composes it: the speech detector's history and the wake-word
// detector on the given runtime, which leaves chunks with no voice near unscored — HINT=none
// scores every chunk instead (the detector before that). ROOM=quiet (synthetic quiet noise) or
// talk (the VAD fixtures' speech, looped: a room where someone is always talking, a television).
// Prints one JSON line: CPU ms per second, RSS before and after the detector, of it the
// process's own (not mapped files: a native library's code pages are those), scoring lag per
// chunk (p50/p99/max), chunks scored, left quiet and dropped.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import type { VoicedHistory } from '../../src/audio/voiced-history.js'
import type { WakeOnset } from '../../src/audio/wake-onset.js'
import { quantile } from '../machine.js'

/**
 * FROM=dist: the compiled JavaScript (`npx tsc -p tsconfig.build.json`), as the service runs it —
 * the runtime's worker thread then loads plain JavaScript, not the sources through tsx's loader
 * (a loader thread and esbuild of its own, which a device never runs). Else the sources.
 */
const from = process.env.FROM === 'dist' ? '../../dist' : '../../src'
const m = async <T>(path: string): Promise<T> => (await import(`${from}/${path}`)) as T
const { realClock } = await m<typeof import('../../src/adapters/clock/real-clock.js')>(
  'adapters/clock/real-clock.js',
)
const { COARSE_HOP } =
  await m<typeof import('../../src/app/wake-detector.js')>('app/wake-detector.js')
const { Watchdog } = await m<typeof import('../../src/app/watchdog.js')>('app/watchdog.js')
const { quietNoise } = await m<typeof import('../../src/audio/pcm.js')>('audio/pcm.js')
const { SpeechDetector } = await m<typeof import('../../src/audio/speech-detector.js')>(
  'audio/speech-detector.js',
)
const { VoicedHistory: Voiced } =
  await m<typeof import('../../src/audio/voiced-history.js')>('audio/voiced-history.js')
const { WakeOnset: Onset } =
  await m<typeof import('../../src/audio/wake-onset.js')>('audio/wake-onset.js')
const { parseWav } = await m<typeof import('../../src/audio/wav.js')>('audio/wav.js')
const { silentLogger } = await m<typeof import('../../src/core/logger.js')>('core/logger.js')

const wake = process.env.WAKE ?? 'native'
const seconds = Number(process.env.SECONDS_PACED ?? 30)
const modelDir = process.env.MODEL_DIR ?? ''
const hinted = process.env.HINT !== 'none'
const roomKind = process.env.ROOM ?? 'quiet'
/** COARSE_HOP=1: every chunk scored exactly, as before coarse scoring. */
const coarseHop = Number(process.env.COARSE_HOP ?? COARSE_HOP)
const rss = () => process.memoryUsage().rss / 2 ** 20
/** Resident memory that is the process's own (heap, arenas, WASM memory), not mapped files. */
const anon = () =>
  Number(/RssAnon:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024

// WAKE=floor: the pacing alone, nothing listening (what the harness itself costs).
const floor = wake === 'floor'
const speech = wake === 'none' ? await SpeechDetector.create() : undefined
const voiced = wake === 'none' || floor ? undefined : await Voiced.create()
const rssBefore = rss()
const anonBefore = anon()
const lags: number[] = []
let detector: OpenWakeWordDetector | undefined
let stage: WakeOnset | undefined
let loadMs = 0
if (wake !== 'none' && !floor) {
  const { loadWakeDetector } = await m<
    typeof import('../../src/adapters/openwakeword/load-detector.js')
  >('adapters/openwakeword/load-detector.js')
  const t = performance.now()
  detector = await loadWakeDetector({
    onWake: (d) => stage?.detected(d),
    phrases: [{ phrase: 'hey jarvis', file: `${modelDir}/hey_jarvis_v0.1.onnx`, threshold: 0.5 }],
    melFile: `${modelDir}/melspectrogram.onnx`,
    embeddingFile: `${modelDir}/embedding_model.onnx`,
    runtime: wake as 'native',
    consecutive: 2,
    refractoryMs: 2000,
    coarseHop,
    logger: silentLogger,
    now: () => performance.now(),
    onScores: (_s, endAt) => lags.push(performance.now() - endAt),
  })
  loadMs = performance.now() - t
  const d = detector
  stage = new Onset({
    // HINT=none: the detector is never told that no voice is near.
    detector: hinted
      ? d
      : {
          phrases: d.phrases,
          push: (f, at) => d.push(f, at),
          setThresholds: (th) => d.setThresholds(th),
          reset: () => d.reset(),
          close: () => d.close(),
        },
    voiced: voiced as VoicedHistory,
    clock: realClock(),
    logger: silentLogger,
  })
}
const rssLoaded = rss()

/** The room, looped: a frame is a view into it, as the microphone lends one. */
function room(): Uint8Array {
  if (roomKind === 'talk') {
    const dir = join(import.meta.dirname, '..', '..', 'fixtures', 'vad')
    const files = ['speech-en-us-m', 'speech-en-gb-f', 'speech-en-us-f2', 'speech-en-sc-m']
    return Buffer.concat(
      files.map((f) => parseWav(readFileSync(join(dir, `${f}.wav`)), 16_000).pcm.subarray(32_000)),
    )
  }
  return quietNoise(32_000, 150)
}
const noise = room()
const loopFrames = Math.floor(noise.length / 640)
const frames = seconds * 50
// The service's own watchdog, reporting instead of killing: a stall it would have ended the
// process for is counted (its bash child runs in the same cgroup, as on the device).
const stalls: string[] = []
const watchdog =
  process.env.WATCHDOG === '1'
    ? new Watchdog({
        action: 'report',
        feeds: { microphone: 10_000 },
        onStall: (what) => stalls.push(what),
      })
    : undefined
const loop = monitorEventLoopDelay({ resolution: 10 })
loop.enable()
const threadsAtStart = threadCpuMs()
const start = performance.now()
const cpu = process.cpuUsage()
let sent = 0
await new Promise<void>((done) => {
  const tick = () => {
    const now = performance.now()
    // Every frame that is due by now, as a capture device delivers them.
    while (sent < frames && start + (sent + 1) * 20 <= now) {
      const off = (sent % loopFrames) * 640
      const frame = noise.subarray(off, off + 640)
      const at = start + (sent + 1) * 20
      speech?.push(frame, at)
      watchdog?.feed('microphone')
      stage?.room(frame, at)
      sent++
    }
    if (sent >= frames) return done()
    setTimeout(tick, Math.max(0, start + (sent + 1) * 20 - performance.now()))
  }
  tick()
})
const used = process.cpuUsage(cpu)
const threadsAtEnd = threadCpuMs()
loop.disable()
await detector?.settled()
const wallS = (performance.now() - start) / 1000
const sorted = [...lags].sort((a, b) => a - b)
process.stdout.write(
  `${JSON.stringify({
    wake,
    seconds: Number(wallS.toFixed(1)),
    cpuMsPerS: Number(((used.user + used.system) / 1000 / wallS).toFixed(1)),
    rssBeforeMb: Number(rssBefore.toFixed(1)),
    rssLoadedMb: Number(rssLoaded.toFixed(1)),
    rssEndMb: Number(rss().toFixed(1)),
    anonBeforeMb: Number(anonBefore.toFixed(1)),
    anonEndMb: Number(anon().toFixed(1)),
    loadMs: Math.round(loadMs),
    lagP50Ms: Number(quantile(sorted, 0.5).toFixed(1)),
    lagP99Ms: Number(quantile(sorted, 0.99).toFixed(1)),
    lagMaxMs: Number((sorted.at(-1) ?? Number.NaN).toFixed(1)),
    scored: detector?.stats().chunksScored ?? 0,
    quiet: detector?.stats().chunksQuiet ?? 0,
    dropped: detector?.stats().chunksDropped ?? 0,
    rests: detector?.stats().rests ?? 0,
    coarse: detector?.stats().coarseScores ?? 0,
    coarseHop,
    watchdogStalls: stalls.length,
    ...threadShares(threadsAtStart, threadsAtEnd, wallS),
    loopDelayP99Ms: Number((loop.percentile(99) / 1e6).toFixed(1)),
    loopDelayMaxMs: Number((loop.max / 1e6).toFixed(1)),
  })}\n`,
)
await stage?.close()
await watchdog?.stop()

/** Each thread's CPU time so far (ms), by thread id, from /proc (Linux). */
function threadCpuMs(): Map<number, { name: string; ms: number }> {
  const threads = new Map<number, { name: string; ms: number }>()
  try {
    for (const t of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // utime, stime: fields 14 and 15, in clock ticks (100 a second on Linux).
      threads.set(Number(t), { name, ms: (Number(f[11]) + Number(f[12])) * 10 })
    }
  } catch {
    // Not Linux: no per-thread figures.
  }
  return threads
}

/** CPU ms per wall second of the main thread (the event loop) and of every other thread. */
function threadShares(
  a: Map<number, { name: string; ms: number }>,
  b: Map<number, { name: string; ms: number }>,
  seconds: number,
): { mainMsPerS: number; otherThreadsMsPerS: number } {
  let main = 0
  let other = 0
  for (const [tid, t] of b) {
    const ms = t.ms - (a.get(tid)?.ms ?? 0)
    if (tid === process.pid) main += ms
    else other += ms
  }
  return {
    mainMsPerS: Number((main / seconds).toFixed(1)),
    otherThreadsMsPerS: Number((other / seconds).toFixed(1)),
  }
}
