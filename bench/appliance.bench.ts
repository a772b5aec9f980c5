// The appliance as a household runs it (issue 5): how long from process start until it listens,
// and how its memory behaves over a long, busy offline session. Reports numbers; asserts nothing.
//
// 1. Start to listening: the offline run (`nocturn demo`, what `npm start` runs) in a fresh process,
//    compiled (`dist/`, as on the device; after `npm run build`) and from the sources under tsx. A
//    preloaded marker notes when the run prints its `[mic]` line, written the moment
//    `startAppliance` resolved (the SessionLoop listens for speech). Target ≤ 1.5 s.
// 2. Memory: the appliance alone in a child process (bench/appliance/soak-child.mjs) for
//    NOCTURN_BENCH_MINUTES (default 10) of wall-clock time, one session kept busy by the world
//    this process runs (bench/appliance/world.ts). RSS and heap sampled every 10 s. Targets: RSS
//    ≤ 100 MB at the end, growth over the last half ≈ 0.
//
// NOCTURN_BENCH_PART=startup|memory (default both), NOCTURN_BENCH_STARTUP_RUNS (default 7).
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { CYCLE_MS, DEVICE, MODEL, startWorld } from './appliance/world.js'
import { machineLine, quantile } from './machine.js'

const ROOT = resolve(import.meta.dirname, '..')
const MINUTES = Number(process.env.NOCTURN_BENCH_MINUTES ?? 10)
const RUNS = Number(process.env.NOCTURN_BENCH_STARTUP_RUNS ?? 7)
const PART = process.env.NOCTURN_BENCH_PART ?? 'all'
/** A session budget in minutes: sessions end on it and reopen (default: one session throughout). */
const SESSION_MINUTES = process.env.NOCTURN_BENCH_SESSION_MINUTES
/** Extra Node flags for the soak child, e.g. `--max-semi-space-size=2`. */
const SOAK_FLAGS = (process.env.NOCTURN_BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)
const SAMPLE_MS = 10_000
const GC_EVERY_MS = 60_000
const MB = 1e6
const hasDist = existsSync(join(ROOT, 'dist/app/cli.js'))
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')

const out = (s: string) => process.stdout.write(`${s}\n`)
const f1 = (n: number) => n.toFixed(1)
const f2 = (n: number) => n.toFixed(2)

// ---- 1. start to listening ------------------------------------------------------------------

interface StartRun {
  /** Parent clock: spawn() → the `[mic]` line read from the child's stdout. */
  spawnToListeningMs: number
  /** Child clock: performance.now() at the `[mic]` line (time since the process began). */
  inProcessMs: number
  exit: number | null
}

function startOnce(args: readonly string[]): Promise<StartRun> {
  return new Promise((done, fail) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NOCTURN_LOG_LEVEL: 'warn' },
    })
    let spawnToListeningMs = Number.NaN
    let inProcessMs = Number.NaN
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (Number.isNaN(spawnToListeningMs) && line.includes('[mic]')) {
        spawnToListeningMs = performance.now() - t0
      }
    })
    createInterface({ input: child.stderr }).on('line', (line) => {
      const m = /^NOCTURN_BENCH_LISTENING ([\d.]+)/.exec(line)
      if (m) inProcessMs = Number(m[1])
    })
    child.on('error', fail)
    child.on('close', (exit) => done({ spawnToListeningMs, inProcessMs, exit }))
  })
}

async function startup(): Promise<string[]> {
  const mark = join(ROOT, 'bench/appliance/mark-listening.mjs')
  const variants: { name: string; args: string[] }[] = []
  if (hasDist)
    variants.push({
      name: 'compiled: `node dist/app/cli.js demo`',
      args: ['--import', mark, 'dist/app/cli.js', 'demo'],
    })
  variants.push({
    name: 'sources: `node --import tsx src/app/cli.ts demo`',
    args: ['--import', 'tsx', '--import', mark, 'src/app/cli.ts', 'demo'],
  })
  const rows: string[] = [
    '| offline run | runs | in-process median ms | in-process max ms | spawn → line median ms | spawn → line max ms | exit codes |',
    '|---|---|---|---|---|---|---|',
  ]
  // A bare Node start on the same machine and load, for scale.
  const bare: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    await new Promise((r) => spawn(process.execPath, ['-e', '0']).on('close', r))
    bare.push(performance.now() - t0)
  }
  for (const v of variants) {
    await startOnce(v.args) // warm the file cache; not counted
    const runs: StartRun[] = []
    for (let i = 0; i < RUNS; i++) {
      runs.push(await startOnce(v.args))
      out(`  ${v.name} run ${i + 1}: ${f1(runs.at(-1)?.inProcessMs ?? Number.NaN)} ms`)
    }
    const inProc = runs.map((r) => r.inProcessMs).sort((a, b) => a - b)
    const spawned = runs.map((r) => r.spawnToListeningMs).sort((a, b) => a - b)
    const codes = [...new Set(runs.map((r) => String(r.exit)))].join(', ')
    rows.push(
      `| ${v.name} | ${runs.length} | ${f1(quantile(inProc, 0.5))} | ${f1(inProc.at(-1) ?? Number.NaN)} | ${f1(quantile(spawned, 0.5))} | ${f1(spawned.at(-1) ?? Number.NaN)} | ${codes} |`,
    )
  }
  bare.sort((a, b) => a - b)
  rows.push('')
  rows.push(
    `Bare \`node -e 0\`, spawn → exit: median ${f1(quantile(bare, 0.5))} ms, max ${f1(bare.at(-1) ?? Number.NaN)} ms. Load average (1/5/15 min) after the start-up runs: ${load()}.`,
  )
  return rows
}

// ---- 2. memory over a long session ----------------------------------------------------------

interface Mem {
  kind: string
  t: number
  rss: number
  heapUsed: number
  heapTotal: number
  external: number
  arrayBuffers: number
  /** Linux only: the anonymous and the file-backed (binary, libraries) parts of the RSS. */
  rssAnon?: number
  rssFile?: number
}

/** Least-squares slope of y over x. */
function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length
  if (n < 2) return Number.NaN
  const mx = points.reduce((s, p) => s + p.x, 0) / n
  const my = points.reduce((s, p) => s + p.y, 0) / n
  let num = 0
  let den = 0
  for (const p of points) {
    num += (p.x - mx) * (p.y - my)
    den += (p.x - mx) ** 2
  }
  return num / den
}

/** The sample nearest to time t. */
function at(samples: readonly Mem[], t: number): Mem | undefined {
  let best: Mem | undefined
  for (const s of samples) if (!best || Math.abs(s.t - t) < Math.abs(best.t - t)) best = s
  return best
}

async function memory(): Promise<string[]> {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-bench-soak-'))
  const world = await startWorld(work)
  const base = hasDist ? 'dist' : 'src'
  const settings = {
    base,
    model: MODEL,
    device: DEVICE,
    baseUrl: world.baseUrl,
    brokerUrl: world.brokerUrl,
    phonesDir: world.phonesDir,
    work,
    inputWav: join(ROOT, 'fixtures/offline/unlock-request.wav'),
    minutes: MINUTES,
    sampleMs: SAMPLE_MS,
    gcEveryMs: GC_EVERY_MS,
    closeWaitMs: 5000,
    ...(SESSION_MINUTES && { sessionMinutes: Number(SESSION_MINUTES) }),
    // Leak hunting: NOCTURN_BENCH_SNAPSHOT_DIR=dir writes heap snapshots after 1 min and just
    // before the end (compare them in Chrome DevTools' Memory tab).
    ...(process.env.NOCTURN_BENCH_SNAPSHOT_DIR && {
      snapshotDir: process.env.NOCTURN_BENCH_SNAPSHOT_DIR,
      snapshotsAtMs: [60_000, Math.max(60_000, MINUTES * 60_000 - 15_000)],
    }),
  }
  const args = [
    '--expose-gc',
    ...SOAK_FLAGS,
    ...(base === 'src' ? ['--import', 'tsx'] : []),
    join(ROOT, 'bench/appliance/soak-child.mjs'),
  ]
  out(
    `  soak: ${MINUTES} min on ${base}/ (samples every ${SAMPLE_MS / 1000} s) ${SOAK_FLAGS.join(' ')}${SESSION_MINUTES ? ` sessions of ${SESSION_MINUTES} min` : ''}`,
  )
  const samples: Mem[] = []
  const gcs: Mem[] = []
  let done: Record<string, unknown> | undefined
  let stderrLines = 0
  const stderrTail: string[] = []
  const loads: string[] = [load()]
  const loadTimer = setInterval(() => loads.push(load()), 60_000)
  const exit = await new Promise<number | null>((resolveExit, fail) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NOCTURN_BENCH_SOAK: JSON.stringify(settings) },
    })
    createInterface({ input: child.stdout }).on('line', (line) => {
      let m: Mem & Record<string, unknown>
      try {
        m = JSON.parse(line)
      } catch {
        return
      }
      if (m.kind === 'sample' || m.kind === 'ready') {
        samples.push(m)
        out(`  t=${f1(m.t / 1000)} s  rss ${f1(m.rss / MB)} MB  heap ${f1(m.heapUsed / MB)} MB`)
      } else if (m.kind === 'gc') gcs.push(m)
      else if (m.kind === 'done') done = m
    })
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderrLines++
      stderrTail.push(line)
      if (stderrTail.length > 20) stderrTail.shift()
    })
    child.on('error', fail)
    child.on('close', resolveExit)
  })
  clearInterval(loadTimer)
  loads.push(load())
  const counts = { ...world.counts }
  const errors = [...world.errors]
  await world.close()
  const raw = join(tmpdir(), `nocturn-bench-soak-${Date.now()}.json`)
  writeFileSync(raw, JSON.stringify({ settings, samples, gcs, done, counts, errors, loads }))
  rmSync(work, { recursive: true, force: true })

  const endT = MINUTES * 60_000
  const half = samples.filter((s) => s.t >= endT / 2)
  const gcHalf = gcs.filter((s) => s.t >= endT / 2 - 1000)
  const last = samples.at(-1)
  const mid = at(samples, endT / 2)
  const perMin = (pts: Mem[], k: 'rss' | 'heapUsed') =>
    slope(pts.map((s) => ({ x: s.t / 60_000, y: s[k] / MB })))
  const maxRss = Math.max(...samples.map((s) => s.rss))
  const rows: string[] = []
  if (!last || !mid) return [`soak failed: exit ${exit}, ${samples.length} samples`, ...stderrTail]
  rows.push(
    '| measure | value |',
    '|---|---|',
    `| RSS when listening (before the session) | ${f1((samples[0]?.rss ?? 0) / MB)} MB |`,
    `| RSS at the end (${MINUTES} min) | ${f1(last.rss / MB)} MB |`,
    `| RSS max | ${f1(maxRss / MB)} MB |`,
    `| RSS at the end: anonymous / file-backed | ${f1((last.rssAnon ?? Number.NaN) / MB)} / ${f1((last.rssFile ?? Number.NaN) / MB)} MB |`,
    `| anonymous RSS growth over the last half: slope | ${f2(slope(half.map((s) => ({ x: s.t / 60_000, y: (s.rssAnon ?? Number.NaN) / MB }))))} MB/min |`,
    `| RSS growth over the last half: slope | ${f2(perMin(half, 'rss'))} MB/min |`,
    `| RSS growth over the last half: end − midpoint | ${f1((last.rss - mid.rss) / MB)} MB |`,
    `| heapUsed at the end / max | ${f1(last.heapUsed / MB)} / ${f1(Math.max(...samples.map((s) => s.heapUsed)) / MB)} MB |`,
    `| heapUsed growth over the last half: slope | ${f2(perMin(half, 'heapUsed'))} MB/min |`,
    `| heap after a forced full GC, each minute | ${gcs.map((g) => f1(g.heapUsed / MB)).join(' · ')} MB |`,
    `| heap after GC, last-half slope | ${f2(perMin(gcHalf, 'heapUsed'))} MB/min |`,
    `| external / arrayBuffers at the end | ${f1(last.external / MB)} / ${f1(last.arrayBuffers / MB)} MB |`,
    `| appliance CPU over the soak | ${done ? f1((Number(done.cpuMs) / (MINUTES * 60_000)) * 100) : '?'} % of one core |`,
  )
  rows.push('')
  rows.push(
    `Session: ${counts.connections} Live connection(s); ${counts.cycles} full ${CYCLE_MS / 1000} s cycles; ${counts.phonePending} approvals shown on the phone, ${counts.approvedCalls} gated calls answered finally, ${counts.unlocks} unlock messages on the lock's topic; ${counts.timeCalls} \`current_time\` calls; ${counts.audioFramesIn} microphone frames reached the fake service; ${counts.missed} waits for an answer ran out.`,
  )
  rows.push(
    `Child: \`node ${args.slice(0, -1).join(' ')} bench/appliance/soak-child.mjs\`, exit ${exit}, ${stderrLines} log lines at warn or above.`,
  )
  if (done) {
    const ended = (done.sessionsEnded ?? []) as {
      reason: string
      turns: number
      calls: { answered: number; withdrawn: number }
      messagesWritten: number
    }[]
    const sum = (f: (x: (typeof ended)[number]) => number) => ended.reduce((a, x) => a + f(x), 0)
    const reasons = [...new Set(ended.map((x) => x.reason))].join(', ')
    rows.push(
      `Appliance: ${ended.length} session(s) ended (${reasons}), ${sum((x) => x.turns)} turns, ${sum((x) => x.calls.answered)} calls answered, ${sum((x) => x.calls.withdrawn)} withdrawn, ${sum((x) => x.messagesWritten)} transcript messages written; LED changes ${JSON.stringify(done.states)}; \`close()\` with the session open: ${String(done.closeWithSessionOpen)}.`,
    )
  }
  if (errors.length > 0) rows.push(`Fake service errors: ${errors.slice(0, 5).join('; ')}`)
  rows.push(`Load average (1/5/15 min) during the soak, each minute: ${loads.join(' → ')}.`)
  rows.push(`Raw samples: ${raw}`)
  if (stderrTail.length > 0) rows.push('', 'Last log lines:', ...stderrTail.map((l) => `    ${l}`))
  return rows
}

out(machineLine())
out(`load average at start: ${load()}; dist/ present: ${hasDist}`)
const report: string[] = []
if (PART !== 'memory') {
  out('\n### start to listening')
  report.push('### Start to listening', '', ...(await startup()), '')
}
if (PART !== 'startup') {
  out('\n### memory')
  report.push(`### Memory over a ${MINUTES}-minute session`, '', ...(await memory()), '')
}
out(`\n${report.join('\n')}`)
