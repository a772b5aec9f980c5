// One paced idle-listening run for wake-word.bench.ts and wake-budget.bench.ts: a room, in real
// time, for SECONDS seconds. With CAPTURE (a capture PCM, ALSA_CONFIG_PATH in the environment:
// wake-budget's FIFO fed by bench/wake/room-feeder.ts) the frames come from the real microphone —
// ArecordMic behind a MicRouter, its `arecord` a child of this process (so inside its cgroup),
// read the way the service reads it idle: in the bursts its router sets, which follow the
// detector's batches (80 ms near a threshold, 320 far below every one or in a quiet room); READ_MS
// instead fixes them (80: the router's before they followed the batches; 20 each frame as it comes,
// as before; a build without read cadences reads each frame whatever is asked).
// Without CAPTURE, 20 ms frames paced by a timer (the harness wake-word.bench.ts uses). WAKE=none:
// today's speech mode (the speech detector alone). Otherwise the wake stage as `listen.mode:
// wake` composes it: the speech detector's history and the wake-word detector on the given
// runtime, which leaves chunks with no voice near unscored — HINT=none scores every chunk instead
// (the detector before that). ROOM=quiet (synthetic quiet noise) or talk (the VAD fixtures'
// speech, looped: a room where someone is always talking, a television). COLD_PAGES=1: the
// detector gives back onnxruntime's cold code pages once its load has settled, as the service
// does (app/compose/cold-pages.ts), a few seconds into the run.
// Prints one JSON line: CPU ms per second (this process's, and arecord's apart), RSS before and
// after the detector, of it the process's own (not mapped files: a native library's code pages
// are those), onnxruntime's library resident at the end and the page faults over the run, scoring lag per chunk (p50/p99/max), chunks scored, left quiet and dropped.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import type { VoicedHistory } from '../../src/audio/voiced-history.js'
import type { WakeOnset } from '../../src/audio/wake-onset.js'
import type { Clock } from '../../src/ports/clock.js'
import { quantile } from '../machine.js'
import { roomAudio } from './room-audio.js'

/**
 * FROM=dist: the compiled JavaScript (`npx tsc -p tsconfig.build.json`), as the service runs it —
 * the runtime's worker thread then loads plain JavaScript, not the sources through tsx's loader
 * (a loader thread and esbuild of its own, which a device never runs). Else the sources.
 * wake-budget.bench.ts also runs this file itself bundled into plain JavaScript, for the same
 * reason; wake-word.bench.ts runs it through tsx.
 */
const from =
  process.env.FROM === 'dist'
    ? '../../dist'
    : process.env.FROM?.startsWith('/')
      ? process.env.FROM // another build's dist/ (the bench's "before")
      : '../../src'
const m = async <T>(path: string): Promise<T> => (await import(`${from}/${path}`)) as T
const { realClock } = await m<typeof import('../../src/adapters/clock/real-clock.js')>(
  'adapters/clock/real-clock.js',
)
const { COARSE_HOP } =
  await m<typeof import('../../src/app/wake-detector.js')>('app/wake-detector.js')
const { Watchdog } = await m<typeof import('../../src/app/watchdog.js')>('app/watchdog.js')
const { SpeechDetector } = await m<typeof import('../../src/audio/speech-detector.js')>(
  'audio/speech-detector.js',
)
const { VoicedHistory: Voiced } =
  await m<typeof import('../../src/audio/voiced-history.js')>('audio/voiced-history.js')
const { WakeOnset: Onset } =
  await m<typeof import('../../src/audio/wake-onset.js')>('audio/wake-onset.js')
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

// WAKE=floor: nothing listening: the microphone's reads (or the pacing) alone, the floor.
const floor = wake === 'floor'
const speech = wake === 'none' ? await SpeechDetector.create() : undefined
const voiced = wake === 'none' || floor ? undefined : await Voiced.create()
const rssBefore = rss()
const anonBefore = anon()
const lags: number[] = []
// DROP_LOG=<file>: a second-by-second timeline of the row (CPU, throttling, scoring lag, drops),
// written there at the end, to see when the drops fall.
const timeline = process.env.DROP_LOG
  ? dropTimeline(process.env.DROP_LOG, () => detector?.stats())
  : undefined
let detector: OpenWakeWordDetector | undefined
let stage: WakeOnset | undefined
/** Where the detector's batches go: the router's idle pace, once the microphone is made. */
let paced: ((everyMs: number, nextMs: number) => void) | undefined
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
    // The microphone's capture times are the clock's (Date.now), as in the service.
    now: () => Date.now(),
    // No session is ever under way here: the service, idle, tells its detector so (a build
    // before it ignores this and rests as it always did).
    sessionOpen: () => false,
    // As listening.ts wires it (a build before it ignores this and reads every 80 ms).
    onBatch: (everyMs, nextMs) => paced?.(everyMs, nextMs),
    onScores: (_s, endAt) => {
      lags.push(Date.now() - endAt)
      timeline?.scored(Date.now() - endAt)
    },
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
/** What the release said (COLD_PAGES=1), and when (s from the first microphone frame). */
let coldPagesSaid: Record<string, unknown> | undefined
let coldPagesAtS: number | undefined
if (process.env.COLD_PAGES === '1' && detector) {
  const { giveBackColdPages } = await m<typeof import('../../src/app/compose/cold-pages.js')>(
    'app/compose/cold-pages.js',
  )
  const mark = join(mkdtempSync(join(tmpdir(), 'nocturn-cold-')), 'wake-release-starting')
  const said = {
    ...silentLogger,
    info: (f: object) => {
      coldPagesSaid ??= f as Record<string, unknown>
      coldPagesAtS ??= secondsIn()
    },
  }
  // No voice driver here: always quiet.
  void giveBackColdPages(detector, mark, said, async () => {})
}
/** Page faults of this process so far (all threads): minor, major. */
const faults = (): [number, number] => {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return [Number(f[7]), Number(f[9])]
}
/** onnxruntime's library resident now (MB). */
const ortMb = () => {
  let kb = 0
  let ort = false
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ /.test(line)
    if (head) ort = line.includes('libonnxruntime')
    const rssKb = /^Rss:\s+(\d+) kB/.exec(line)
    if (ort && rssKb) kb += Number(rssKb[1])
  }
  return kb / 1024
}
let faultsAtStart = faults()

const noise = roomAudio(roomKind)
const loopFrames = Math.floor(noise.length / 640)
const frames = seconds * 50
// The service's own watchdog as `nocturn run` makes it (the event loop's 15 s), reporting instead
// of killing: each stall it would have ended the process for is counted, s from the first frame
// (its bash child runs in the same cgroup, as on the device). The microphone is watched as the
// service watches it, by the capture watchdog around the recorder (below).
const loopStalls: number[] = []
const watchdog =
  process.env.WATCHDOG === '1'
    ? new Watchdog({
        action: 'report',
        loopLimitMs: 15_000,
        onStall: () => loopStalls.push(secondsIn()),
      })
    : undefined
/** The capture watchdog's restarts of the microphone: s from the first frame, each. */
const micRestarts: number[] = []
// The loop's delay sampled every LOOP_MS (10; wake-budget's rows 100): a timer of its own, whose
// wake-ups cost the child CPU the service does not spend (wake-budget.bench.ts, LOOP_MS). LOOP_MS=0:
// no timer of its own; the delay is how late the microphone's own timers fire (its idle bursts'
// reads: `micClock` below), what the service's loop does anyway.
const loopMs = Number(process.env.LOOP_MS ?? 10)
const loop = loopMs > 0 ? monitorEventLoopDelay({ resolution: loopMs }) : undefined
loop?.enable()
/** How late each of the microphone's timers fired (ms), while LOOP_MS=0. */
let timerLateness: number[] = []
let threadsAtStart = threadCpuMs()
let start = performance.now()
let cpu = process.cpuUsage()
/** From now: the first microphone frame. */
function resetClocks(): void {
  faultsAtStart = faults()
  threadsAtStart = threadCpuMs()
  start = performance.now()
  timeline?.start()
  cpu = process.cpuUsage()
  loop?.reset()
  timerLateness = []
}
/** Seconds since the first microphone frame, to a tenth (when something happened in the row). */
function secondsIn(): number {
  return Math.round((performance.now() - start) / 100) / 10
}
let sent = 0
/** Reads of the microphone that handed frames on (the process's wake-ups for audio). */
let reads = 0
const capture = process.env.CAPTURE
/** The real microphone's recorder, when there is one: its pid, for its CPU time. */
let recorderPid: number | undefined
let recorderAtStart = 0
let recorderAtEnd = 0
/**
 * SETTLE_S: CPU counted once more from this many seconds into the row — past the JIT's warm-up
 * and the load's after-work (the cold pages, the streamed embedding's check), what a speaker
 * listening for hours spends. A 240 s talking room on the AMD VM read 23.9 ms/s at 12–52 s and
 * 16.9 at 172–212 s (bench/RESULTS.md, "the bench child as plain JavaScript").
 */
const settleFrames = Number(process.env.SETTLE_S ?? 0) * 50
let settledFrom:
  | {
      at: number
      cpu: NodeJS.CpuUsage
      threads: Map<number, { name: string; ms: number }>
      recorder: number
    }
  | undefined
const hear = (frame: Uint8Array, at: number) => {
  speech?.push(frame, at)
  stage?.room(frame, at)
  sent++
  if (sent === settleFrames)
    settledFrom = {
      at: performance.now(),
      cpu: process.cpuUsage(),
      threads: threadCpuMs(),
      recorder: processCpuMs(recorderPid),
    }
  if (timeline && detector) timeline.frame(detector.stats().chunksDropped)
}
if (capture) {
  const { ArecordMic } = await m<typeof import('../../src/adapters/alsa/arecord-mic.js')>(
    'adapters/alsa/arecord-mic.js',
  )
  const { MicRouter } =
    await m<typeof import('../../src/audio/mic-router.js')>('audio/mic-router.js')
  const { CaptureWatchdog } = await m<typeof import('../../src/audio/capture-watchdog.js')>(
    'audio/capture-watchdog.js',
  )
  const mic = new ArecordMic({ device: capture, clock: micClock(), logger: silentLogger })
  // As app/audio.ts wraps a device: a microphone silent past its limit is restarted, and said.
  const watched = new CaptureWatchdog({
    source: mic,
    clock: realClock(),
    deviceName: capture,
    logger: {
      ...silentLogger,
      warn: (f: object) => {
        if ((f as { event?: string }).event === 'audio_capture_stalled')
          micRestarts.push(secondsIn())
      },
    },
  })
  // The bench ends a row past its time with SIGTERM: the recorder, blocked reading a device whose
  // feeder is gone, ignores the pipe's end and SIGTERM, and was left running.
  process.once('SIGTERM', () => {
    try {
      if (mic.pid) process.kill(mic.pid, 'SIGKILL')
    } catch {
      // Already gone (it ended, or was restarted and its pid reaped): nothing left to end.
    }
    process.exit(143)
  })
  const readMs = process.env.READ_MS ? Number(process.env.READ_MS) : undefined
  // As the service composes it: the router sets the idle cadence (main's build: none there).
  const router = new MicRouter(
    {
      sampleRateHz: mic.sampleRateHz,
      start: (s) => watched.start(s),
      stop: () => watched.stop(),
      setMuted: () => {},
    },
    {
      // READ_MS, when set, stands in for the router's idle bursts; main's build has no reads.
      reads: (mic as { reads?: unknown }).reads
        ? {
            every: (ms: number, nextMs?: number) =>
              readMs === undefined
                ? mic.reads.every(ms, nextMs)
                : mic.reads.every(ms > 20 ? readMs : ms),
            align: () => mic.reads.align(),
          }
        : undefined,
    },
  )
  const pace = (router as { paceIdle?: (ms: number, nextMs?: number) => void }).paceIdle
  if (readMs === undefined && pace) paced = (everyMs, nextMs) => pace.call(router, everyMs, nextMs)
  let first = true
  let inRead = false
  const endRead = () => {
    inRead = false
  }
  await new Promise<void>((done) => {
    void router.start({
      frame: (frame, at) => {
        // Frames handed on in one synchronous run came from one read of the recorder's output.
        if (!inRead) {
          inRead = true
          reads++
          queueMicrotask(endRead)
        }
        if (first) {
          // Timed from the first frame (arecord's start-up is not listening).
          first = false
          resetClocks()
          reads = 1
          recorderPid = mic.pid
          recorderAtStart = processCpuMs(recorderPid)
        }
        hear(frame, at)
        if (sent === frames) {
          recorderAtEnd = processCpuMs(recorderPid)
          done()
        }
      },
      error: (e) => process.stderr.write(`microphone: ${e.message}\n`),
    })
  })
  await router.stop()
} else {
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now()
      // Every frame that is due by now, as a capture device delivers them.
      while (sent < frames && start + (sent + 1) * 20 <= now) {
        const off = (sent % loopFrames) * 640
        hear(noise.subarray(off, off + 640), start + (sent + 1) * 20)
      }
      if (sent >= frames) return done()
      setTimeout(tick, Math.max(0, start + (sent + 1) * 20 - performance.now()))
    }
    tick()
  })
}
const cpuAtEnd = process.cpuUsage()
const endedAt = performance.now()
timeline?.end()
const threadsAtEnd = threadCpuMs()
const settled = settledFrom && settledCpu(settledFrom)
const faultsAtEnd = faults()
loop?.disable()
await detector?.settled()
const wallS = (performance.now() - start) / 1000
const sorted = [...lags].sort((a, b) => a - b)
process.stdout.write(
  `${JSON.stringify({
    wake,
    seconds: Number(wallS.toFixed(1)),
    cpuMsPerS: Number((cpuMsSince(cpu) / wallS).toFixed(1)),
    rssBeforeMb: Number(rssBefore.toFixed(1)),
    rssLoadedMb: Number(rssLoaded.toFixed(1)),
    rssEndMb: Number(rss().toFixed(1)),
    anonBeforeMb: Number(anonBefore.toFixed(1)),
    anonEndMb: Number(anon().toFixed(1)),
    loadMs: Math.round(loadMs),
    ortEndMb: Number(ortMb().toFixed(1)),
    minorFaults: faultsAtEnd[0] - faultsAtStart[0],
    majorFaults: faultsAtEnd[1] - faultsAtStart[1],
    coldPages: coldPagesSaid?.coldPages,
    coldPagesAtS,
    // On the event loop (cold-pages.ts): what inside a quota can hold it for seconds.
    coldPagesTookMs: coldPagesSaid?.tookMs,
    lagP50Ms: Number(quantile(sorted, 0.5).toFixed(1)),
    lagP99Ms: Number(quantile(sorted, 0.99).toFixed(1)),
    lagMaxMs: Number((sorted.at(-1) ?? Number.NaN).toFixed(1)),
    scored: detector?.stats().chunksScored ?? 0,
    quiet: detector?.stats().chunksQuiet ?? 0,
    dropped: detector?.stats().chunksDropped ?? 0,
    rests: detector?.stats().rests ?? 0,
    coarse: detector?.stats().coarseScores ?? 0,
    // A build before the far hop has no such count.
    behind: detector?.stats().behindRequests ?? 0,
    coarseHop,
    micRestarts: micRestarts.length,
    micRestartsAtS: micRestarts.join(' ') || undefined,
    loopStalls: loopStalls.length,
    loopStallsAtS: loopStalls.join(' ') || undefined,
    recorderMsPerS:
      recorderPid === undefined
        ? undefined
        : Number(((recorderAtEnd - recorderAtStart) / wallS).toFixed(1)),
    readMs: capture && process.env.READ_MS ? Number(process.env.READ_MS) : undefined,
    readsPerS: capture ? Number((reads / wallS).toFixed(1)) : undefined,
    ...threadShares(threadsAtStart, threadsAtEnd, wallS),
    ...loopDelay(),
    settled,
  })}\n`,
)
await stage?.close()
await watchdog?.stop()

/** The process's CPU time (ms) from `from` to the row's end. */
function cpuMsSince(from: NodeJS.CpuUsage): number {
  return (cpuAtEnd.user - from.user + cpuAtEnd.system - from.system) / 1000
}

/** CPU ms per wall second from SETTLE_S to the row's end: the process, its threads, arecord. */
function settledCpu(from: NonNullable<typeof settledFrom>) {
  const s = (endedAt - from.at) / 1000
  return {
    fromS: settleFrames / 50,
    cpuMsPerS: Number((cpuMsSince(from.cpu) / s).toFixed(1)),
    ...threadShares(from.threads, threadsAtEnd, s),
    recorderMsPerS:
      recorderPid === undefined
        ? undefined
        : Number(((recorderAtEnd - from.recorder) / s).toFixed(1)),
  }
}

/** A process's CPU time so far (ms), from /proc (Linux; 0 elsewhere or once it is gone). */
function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) * 10
  } catch {
    return 0
  }
}

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
    if (process.env.THREADS === '1' && ms > 0) process.stderr.write(`thread ${t.name}: ${ms} ms\n`)
  }
  return {
    mainMsPerS: Number((main / seconds).toFixed(1)),
    otherThreadsMsPerS: Number((other / seconds).toFixed(1)),
  }
}

/** The detector's counters the timeline reads each second (any build's `stats()` has them). */
interface Counted {
  readonly rests: number
  readonly coarseScores: number
  readonly offsetScores: number
}

/**
 * Each second of the row: CPU ms (the process's), the quota's throttled ms and periods (cgroup
 * v2's cpu.stat), the largest scoring lag, chunks scored and dropped, the detector's rests, coarse
 * scores and second-phase scores (none coarse and some second-phase: an exact stretch), and each
 * drop's time.
 */
function dropTimeline(file: string, stats: () => Counted | undefined) {
  const cgroup = readFileSync('/proc/self/cgroup', 'utf8').trim().split(':').at(-1) ?? '/'
  const stat = () => {
    try {
      const s = readFileSync(`/sys/fs/cgroup${cgroup}/cpu.stat`, 'utf8')
      return {
        throttledMs: Number(/throttled_usec (\d+)/.exec(s)?.[1] ?? 0) / 1000,
        periods: Number(/nr_throttled (\d+)/.exec(s)?.[1] ?? 0),
      }
    } catch {
      return { throttledMs: 0, periods: 0 }
    }
  }
  let t0 = 0
  let dropped = 0
  let second = { maxLag: 0, scored: 0, dropped: 0 }
  let cpuAt = process.cpuUsage()
  let statAt = stat()
  const rows: unknown[] = []
  const drops: { t: number; lag: number }[] = []
  let lastLag = 0
  let timer: NodeJS.Timeout | undefined
  const counted = () => stats() ?? { rests: 0, coarseScores: 0, offsetScores: 0 }
  // Read from start() on: the detector is made after the timeline.
  let countedAt: Counted = { rests: 0, coarseScores: 0, offsetScores: 0 }
  const tick = () => {
    const c = process.cpuUsage(cpuAt)
    cpuAt = process.cpuUsage()
    const st = stat()
    const n = counted()
    rows.push({
      t: Math.round((performance.now() - t0) / 1000),
      cpuMs: Math.round((c.user + c.system) / 1000),
      throttledMs: Math.round(st.throttledMs - statAt.throttledMs),
      throttledPeriods: st.periods - statAt.periods,
      ...second,
      rests: n.rests - countedAt.rests,
      coarse: n.coarseScores - countedAt.coarseScores,
      offset: n.offsetScores - countedAt.offsetScores,
    })
    statAt = st
    countedAt = n
    second = { maxLag: 0, scored: 0, dropped: 0 }
  }
  return {
    start() {
      t0 = performance.now()
      cpuAt = process.cpuUsage()
      statAt = stat()
      countedAt = counted()
      timer = setInterval(tick, 1000)
    },
    scored(lag: number) {
      lastLag = lag
      second.scored++
      if (lag > second.maxLag) second.maxLag = lag
    },
    frame(nowDropped: number) {
      if (nowDropped === dropped) return
      for (let k = dropped; k < nowDropped; k++) {
        drops.push({ t: Number(((performance.now() - t0) / 1000).toFixed(2)), lag: lastLag })
      }
      second.dropped += nowDropped - dropped
      dropped = nowDropped
    },
    end() {
      if (timer) clearInterval(timer)
      tick()
      writeFileSync(file, `${JSON.stringify({ drops, rows })}\n`)
    },
  }
}

/**
 * The real clock, each timer it sets noting how late it fired — with LOOP_MS=0 the loop's delay,
 * measured at no cost of its own on the timers the microphone's idle reads set anyway.
 */
function micClock(): Clock {
  const clock = realClock()
  if (loop) return clock
  return {
    ...clock,
    setTimeout: (fn, ms) => {
      const due = performance.now() + ms
      return clock.setTimeout(() => {
        timerLateness.push(performance.now() - due)
        fn()
      }, ms)
    },
  }
}

/** The event loop's delay p99 and max (ms), from the monitor or the microphone's timers. */
function loopDelay(): { loopDelayP99Ms?: number; loopDelayMaxMs?: number } {
  if (loop) {
    return {
      loopDelayP99Ms: Number((loop.percentile(99) / 1e6).toFixed(1)),
      loopDelayMaxMs: Number((loop.max / 1e6).toFixed(1)),
    }
  }
  const late = [...timerLateness].sort((a, b) => a - b)
  if (late.length === 0) return {}
  return {
    loopDelayP99Ms: Number(quantile(late, 0.99).toFixed(1)),
    loopDelayMaxMs: Number((late.at(-1) ?? 0).toFixed(1)),
  }
}
