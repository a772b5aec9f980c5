// Issue 47: listening within a Pi 4's budget while the television talks. `npm run bench --
// wake-budget`. Side by side in one run, each row its own process (bench/wake/idle-child.ts, the
// room from a real microphone in real time, the service's watchdog in report mode): the microphone
// read with nothing listening (the floor),
// speech mode, and wake mode scoring every chunk exactly (as before issue 47) and coarsely (the
// service now), in a quiet room and a talking one (the VAD fixtures' speech looped: a television);
// then the talking room inside cgroup CPU quotas of 2.5 % and 1.7 % of one core (a Pi 4's 10 %
// at ×4 and ×6 this machine's per-core time): chunks dropped, the event loop's delay p99 and max,
// the microphone's restarts by the capture watchdog (as the service wraps it) and the process
// watchdog's stalls (the event loop's 15 s), cpu.stat's throttling.
// CPU is the child's own CPU time per wall second, not wall time. WAKE_BUDGET_SECONDS sets the
// quota rows' length (600, the issue's ten minutes), WAKE_BUDGET_FREE_SECONDS the others' (60),
// WAKE_BUDGET_SETTLE_SECONDS a second CPU column counted from that far into them (none by default;
// 60 of 240 for a speaker listening for hours);
// WAKE_BUDGET_ROOMS and WAKE_BUDGET_QUOTAS pick the rows (all by default), WAKE_BUDGET_ONLY the
// variants (comma-separated parts of their labels), WAKE_BUDGET_LOOP_MS the loop monitor's step (0,
// the default: none, the microphone's own timers).
// The room comes through the real microphone: a FIFO-backed capture PCM (test/helpers/alsa.ts)
// fed in real time by bench/wake/room-feeder.ts (its own process, outside the quota), read by the
// child's ArecordMic as the service reads it idle — in the bursts its router sets from the
// detector's batches, or of WAKE_BUDGET_READ_MS when set (80: the router's before they followed
// the batches; 20: each frame as it comes, as before). arecord is the child's child, inside the
// quota as on the device, and its CPU is counted apart. WAKE_BUDGET_FROM: another build's dist/
// (absolute; main's for "before", which reads each frame as it comes whatever is asked).
// The children run the compiled JavaScript (FROM=dist, as the service does: the runtime's thread
// then loads no TypeScript loader of its own), so run `npx tsc -p tsconfig.build.json` first; the
// child itself is bundled into plain JavaScript at the start (plainChild below), so no TypeScript
// loader runs in it either. The CPU is also split between the main thread (the event loop) and
// every other thread (the runtime's, V8's helpers). Reports; asserts nothing.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { build } from 'esbuild'
import { hermeticAlsa } from '../test/helpers/alsa.js'
import { makeCpuQuota } from '../test/helpers/cpu-quota.js'
import { MODEL_DIR } from '../test/helpers/wake.js'
import { machineLine } from './machine.js'

if (
  !existsSync(
    join(import.meta.dirname, '..', 'dist', 'adapters', 'openwakeword', 'model-worker.js'),
  )
) {
  process.stderr.write(
    'wake-budget bench: run `npx tsc -p tsconfig.build.json` first (dist/ is missing)\n',
  )
  process.exit(1)
}
const QUOTA_S = Number(process.env.WAKE_BUDGET_SECONDS ?? 600)
const FREE_S = Number(process.env.WAKE_BUDGET_FREE_SECONDS ?? 60)
/**
 * The unconstrained rows' CPU also from this many seconds in (0: not), in a column of its own:
 * a row's first minute holds the JIT's warm-up and the load's after-work, which a speaker
 * listening for hours does not spend again (idle-child.ts, SETTLE_S).
 */
const SETTLE_S = Number(process.env.WAKE_BUDGET_SETTLE_SECONDS ?? 0)
// A shorter run for a before/after probe: WAKE_BUDGET_ROOMS=talk (none: no
// unconstrained rows), WAKE_BUDGET_QUOTAS=2.5,
// WAKE_BUDGET_ONLY=coarse (the variants whose label has it).
const ROOMS = (process.env.WAKE_BUDGET_ROOMS ?? 'quiet,talk')
  .split(',')
  .filter((r): r is 'quiet' | 'talk' => r === 'quiet' || r === 'talk')
/** Comma-separated: the variants whose label has any of them (all by default). */
const ONLY = (process.env.WAKE_BUDGET_ONLY ?? '').split(',')
const picked = (v: Variant) => ONLY.some((o) => v.label.includes(o))
const READ_MS = process.env.WAKE_BUDGET_READ_MS ?? ''
/**
 * The loop-delay monitor's resolution; 0 (the default): no monitor, the delay read from how late
 * the microphone's own timers fire (its idle reads, 25 a second: idle-child.ts), what the service
 * does anyway. A monitor's timer wakes the child, a cost the service does not have: on this VM an
 * idle node spent 7.55 ms/s of CPU with the monitor at 10 ms (100 wake-ups a second), 1.34 at
 * 100 ms (the rows until 2026-12-07), 0.16 without it — inside 2.5 % of a core (25 ms/s) the
 * bench took up to a third of the quota for itself at 10, a twentieth at 100. Rows of a variant
 * with no timers of its own (speech mode reads each frame as it comes) then show no delay.
 */
const LOOP_MS = process.env.WAKE_BUDGET_LOOP_MS ?? '0'
const FROM = process.env.WAKE_BUDGET_FROM ?? 'dist'
const QUOTAS = (process.env.WAKE_BUDGET_QUOTAS ?? '2.5,1.7').split(',').filter(Boolean).map(Number)
const out = (s: string) => process.stdout.write(`${s}\n`)
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')

/**
 * The child (idle-child.ts and what it imports of the bench) as one plain JavaScript file. Run
 * through `--import tsx` it carried tsx's loader: a thread with a V8 heap of its own, collected
 * now and then in a talking room — ~2.4 ms/s of CPU and 9–20 MB of RSS side by side with the
 * bundled child (bench/RESULTS.md, "the bench child as plain JavaScript"), the service's bundle
 * has neither, and inside a quota it ran on the quota's time. Its imports of the service are
 * the compiled build's (FROM, made absolute: the file sits in a temporary folder), as before.
 */
async function plainChild(): Promise<{ file: string; from: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-wake-budget-'))
  const file = join(dir, 'idle-child.mjs')
  await build({
    entryPoints: [join(import.meta.dirname, 'wake', 'idle-child.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: file,
    // Where the child finds the room's fixtures: beside its source, not the temporary file.
    define: { 'import.meta.dirname': JSON.stringify(join(import.meta.dirname, 'wake')) },
    logLevel: 'warning',
  })
  const from = FROM === 'dist' ? resolve(import.meta.dirname, '..', 'dist') : FROM
  return { file, from, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
const child = await plainChild()
process.on('exit', () => child.remove())

interface Variant {
  readonly label: string
  readonly wake: 'floor' | 'none' | 'native'
  readonly hop?: number
  /** Gives back onnxruntime's cold code pages once the load has settled (the service). */
  readonly coldPages?: boolean
}
const VARIANTS: readonly Variant[] = [
  { label: 'floor (reading only)', wake: 'floor' },
  { label: 'speech mode', wake: 'none' },
  { label: 'wake, every chunk exact (hop 1)', wake: 'native', hop: 1 },
  { label: 'wake, coarse (hop 2, the service)', wake: 'native', hop: 2 },
  {
    label: 'wake, coarse, cold pages given back',
    wake: 'native',
    hop: 2,
    coldPages: true,
  },
]

function run(
  v: Variant,
  room: 'quiet' | 'talk',
  seconds: number,
  quotaPercent?: number,
): Record<string, number | string> | string {
  const q =
    quotaPercent === undefined ? undefined : makeCpuQuota('nocturn-wake-budget', quotaPercent)
  if (typeof q === 'string') return `not measured (${q})`
  const alsa = hermeticAlsa('fifo', { stall: false })
  // Inside a quota the recorder is throttled too, and the row's audio comes slower than real time
  // (a 60 s row took 150 s inside 2.5 %): room enough for that, for the child and its feeder.
  const limitMs = (3 * seconds + 300) * 1000
  const feeder = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, 'wake', 'room-feeder.ts'),
      alsa.infile,
      room,
      String(seconds),
      String(limitMs),
    ],
    { stdio: 'ignore' },
  )
  const before = load()
  try {
    const r = spawnSync('sh', ['-c', `${q ? q.enter : 'exec'} ${process.execPath} ${child.file}`], {
      env: {
        ...alsa.env,
        CAPTURE: alsa.capture,
        READ_MS,
        LOOP_MS,
        WAKE: v.wake,
        ROOM: room,
        COARSE_HOP: String(v.hop ?? 1),
        COLD_PAGES: v.coldPages ? '1' : '0',
        MODEL_DIR,
        SECONDS_PACED: String(seconds),
        SETTLE_S: String(quotaPercent === undefined ? SETTLE_S : 0),
        WATCHDOG: '1',
        FROM: child.from,
        // WAKE_BUDGET_DROP_LOG=<file>: the child's second-by-second timeline (idle-child.ts).
        ...(process.env.WAKE_BUDGET_DROP_LOG
          ? { DROP_LOG: `${process.env.WAKE_BUDGET_DROP_LOG}-${quotaPercent ?? 'free'}.json` }
          : {}),
      },
      encoding: 'utf8',
      timeout: limitMs,
    })
    const line = r.stdout.trim().split('\n').at(-1) ?? ''
    if (!line.startsWith('{')) {
      // A child that printed no result says why: its exit, and the end of what it wrote.
      const how = r.error ? r.error.message : `exit ${r.status ?? r.signal}`
      return `failed: ${how}; ${r.stderr.trim().split('\n').slice(-3).join(' / ').slice(0, 400)}`
    }
    const parsed = JSON.parse(line) as Record<string, number | string>
    parsed.loadBefore = before
    parsed.loadAfter = load()
    if (q) {
      const stat = readFileSync(join(q.dir, 'cpu.stat'), 'utf8')
      parsed.throttledS = (Number(/throttled_time (\d+)/.exec(stat)?.[1] ?? 0) / 1e9).toFixed(1)
    }
    return parsed
  } catch (err) {
    return `failed: ${String(err).slice(0, 200)}`
  } finally {
    feeder.kill()
    q?.remove()
  }
}

/** The settled CPU's cell: the process (main + other threads) · arecord. */
function settledCell(s: unknown): string {
  if (typeof s !== 'object' || s === null) return '—'
  const x = s as Record<string, number>
  return `${x.cpuMsPerS} (${x.mainMsPerS} + ${x.otherThreadsMsPerS}) · ${x.recorderMsPerS ?? '—'}`
}

out(
  `# wake budget · ${machineLine()} · load ${load()} · microphone read ${READ_MS ? `every ${READ_MS} ms` : "in the detector's batches"} idle · loop delay ${LOOP_MS === '0' ? "from the microphone's timers" : `sampled every ${LOOP_MS} ms`} · from ${FROM}`,
)
out(
  `\nunconstrained, ${FREE_S} s a row: CPU ms per wall second (the process's own CPU time), RSS at the end`,
)
out(
  `| variant | room | CPU ms/s (main + other threads) | arecord ms/s |${SETTLE_S ? ` from ${SETTLE_S} s: CPU ms/s (main + other) · arecord |` : ''} reads/s | RSS end (MB) | onnxruntime MB end | faults minor / major | chunks scored / dropped | coarse scores | loop delay p99 / max (ms) | load before → after |`,
)
out(`|---|---|---|---|${SETTLE_S ? '---|' : ''}---|---|---|---|---|---|---|---|`)
for (const room of ROOMS) {
  for (const v of VARIANTS.filter(picked)) {
    const r = run(v, room, FREE_S)
    out(
      typeof r === 'string'
        ? `| ${v.label} | ${room} | ${r} |`
        : `| ${v.label} | ${room} | ${r.cpuMsPerS} (${r.mainMsPerS} + ${r.otherThreadsMsPerS}) | ${r.recorderMsPerS} |${SETTLE_S ? ` ${settledCell(r.settled)} |` : ''} ${r.readsPerS} | ${r.rssEndMb} | ${r.ortEndMb ?? '—'} | ${r.minorFaults ?? '—'} / ${r.majorFaults ?? '—'} | ${r.scored} / ${r.dropped} | ${r.coarse ?? '—'} | ${r.loopDelayP99Ms ?? '—'} / ${r.loopDelayMaxMs ?? '—'} | ${r.loadBefore} → ${r.loadAfter} |`,
    )
  }
}
for (const quota of QUOTAS) {
  out(`\ninside ${quota} % of one core, a talking room, ${QUOTA_S} s a row`)
  out(
    '| variant | CPU ms/s (main + other threads) | arecord ms/s | reads/s | chunks scored / dropped (of all) | rests | coarse scores (requests behind) | scoring lag p99 (ms) | loop delay p99 / max (ms) | microphone restarts (at s) / watchdog loop stalls | cold pages given back at s (took ms) | throttled (s) | load before → after |',
  )
  out('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const v of VARIANTS.slice(1).filter(picked)) {
    const r = run(v, 'talk', QUOTA_S, quota)
    const all = QUOTA_S * 12.5
    out(
      typeof r === 'string'
        ? `| ${v.label} | ${r} |`
        : `| ${v.label} | ${r.cpuMsPerS} (${r.mainMsPerS} + ${r.otherThreadsMsPerS}) | ${r.recorderMsPerS} | ${r.readsPerS} | ${r.scored} / ${r.dropped} (of ${all}) | ${r.rests} | ${r.coarse} (${r.behind}) | ${r.lagP99Ms} | ${r.loopDelayP99Ms ?? '—'} / ${r.loopDelayMaxMs ?? '—'} | ${r.micRestarts}${r.micRestartsAtS ? ` (${r.micRestartsAtS})` : ''} / ${r.loopStalls}${r.loopStallsAtS ? ` (${r.loopStallsAtS})` : ''} | ${r.coldPagesAtS ?? '—'} (${r.coldPagesTookMs ?? '—'}) | ${r.throttledS} | ${r.loadBefore} → ${r.loadAfter} |`,
    )
  }
}
