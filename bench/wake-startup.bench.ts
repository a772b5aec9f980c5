// Issue 47, start-up: `nocturn run` in wake mode against the import floor, in one run.
// `npm run bench -- wake-startup` (needs `npm run build`, or at least `npx tsc -p
// tsconfig.build.json && node scripts/bundle-service.mjs`). Alternating, WAKE_STARTUP_RUNS rounds
// (default 5) after one unmeasured warm-up of each:
//   floor — a fresh `node` importing ws, mqtt, @google/genai, better-sqlite3 and pino (the five the
//           service imports at start, as bench/startup.bench.ts), spawn → its line;
//   speech — the service bundle (dist/service/cli.js) in speech mode, spawn → `nocturn running`;
//   wake — the same in wake mode (hey_jarvis, native): spawn → `panel starting`, `panel started`
//          (gpiomon is running: the button answers from here), `listening for the wake phrase`,
//          `nocturn running`.
// WAKE_STARTUP_BEFORE=<another built checkout>: its wake mode too, in the same alternation ("before").
// Each on WAV audio (silence), the fake Live service, no broker, the gpiod panel's stand-ins (POSIX
// sh, as cheap as the real tools: bench/wake/gpiod-sh.ts; WAKE_STARTUP_GPIOD=node for the tests'
// node ones, ~40 ms a spawn, which the rows before 6 Dec 07:00 UTC were timed with), on
// this process's clock, with the CPU time the process had spent by then (all its threads, from
// /proc's schedstat: it survives a loaded machine better than the wall time). RSS of each after
// WAKE_STARTUP_IDLE_S (default 10) s idle, one more of each kind left idle side by side after the
// timed rounds, and its split: anonymous (the process's own) and file (mapped code: node's, the
// native libraries'), and by mapping (onnxruntime's library, node's binary, glibc's heap…); when
// wake mode gave back onnxruntime's cold code pages, and the page faults since. Reports; asserts nothing.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { wavHeader } from '../src/audio/wav.js'
import { silentLogger } from '../src/core/logger.js'
import { FakeLiveServer } from '../src/testing/fake-live-server/index.js'
import { fakeGpiod } from '../test/helpers/fake-gpiod.js'
import { fakeLiveProvider } from '../test/helpers/nocturn-process.js'
import { MODEL_DIR } from '../test/helpers/wake.js'
import { machineLine, quantile } from './machine.js'
import { shGpiod } from './wake/gpiod-sh.js'

const ROOT = resolve(import.meta.dirname, '..')
const RUNS = Number(process.env.WAKE_STARTUP_RUNS ?? 5)
const BEFORE = process.env.WAKE_STARTUP_BEFORE
const IDLE_MS = Number(process.env.WAKE_STARTUP_IDLE_S ?? 10) * 1000
const FLOOR_MARK = 'NOCTURN_FLOOR_IMPORTED'
const FLOOR = ['ws', 'mqtt', '@google/genai', 'better-sqlite3', 'pino']
const out = (s: string) => process.stdout.write(`${s}\n`)
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')

if (!existsSync(join(ROOT, 'dist/service/cli.js'))) {
  process.stderr.write('wake-startup bench: dist/service/cli.js is missing, run `npm run build`\n')
  process.exit(1)
}

const work = mkdtempSync(join(tmpdir(), 'nocturn-wake-startup-'))
const silence = new Uint8Array(16_000 * 2 * 60)
writeFileSync(
  join(work, 'silence.wav'),
  Buffer.concat([wavHeader(16_000, silence.length), silence]),
)
const server = await FakeLiveServer.start({ scripts: [], logger: silentLogger })
const gpiod = process.env.WAKE_STARTUP_GPIOD === 'node' ? fakeGpiod(2) : shGpiod()

function config(mode: 'speech' | 'wake', n: number): string {
  const dir = mkdtempSync(join(work, `${mode}-${n}-`))
  const path = join(dir, 'config.json')
  writeFileSync(
    path,
    JSON.stringify({
      provider: fakeLiveProvider(server.baseUrl),
      audio: {
        backend: 'wav',
        inputWav: join(work, 'silence.wav'),
        outputWav: join(dir, 'speaker.wav'),
      },
      phonesDir: join(dir, 'phones'),
      store: { path: join(dir, 'nocturn.db') },
      panel: { backend: 'gpiod', button: 'GPIO17' },
      listen:
        mode === 'wake'
          ? {
              mode: 'wake',
              wake: { models: [{ model: 'hey_jarvis' }], modelDir: MODEL_DIR, runtime: 'native' },
            }
          : { mode: 'speech' },
    }),
  )
  return path
}

interface Started {
  readonly child: ChildProcess
  /**
   * Once wake mode gave back onnxruntime's cold code pages (or kept them): ms from spawn, what it
   * said, and the process's page faults (minor, major) then.
   */
  release?: { ms: number; line: Record<string, unknown>; faults: [number, number] }
  /** ms from spawn to each awaited line. */
  readonly at: Record<string, number>
  /** The process's CPU time (ms, all threads) when each line was read. */
  readonly cpu: Record<string, number>
}

/** CPU time of every thread of `pid` so far (ms), 0 once it is gone. */
function cpuMs(pid: number | undefined): number {
  try {
    let ns = 0
    for (const t of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0])
    return ns / 1e6
  } catch {
    return 0
  }
}

/** Spawns node with `args` and resolves once every one of `marks` was written (ms from spawn). */
function start(args: readonly string[], marks: readonly string[], cwd = ROOT): Promise<Started> {
  const t0 = performance.now()
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...gpiod.env, GEMINI_API_KEY: 'bench-key', NOCTURN_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const at: Record<string, number> = {}
  const cpu: Record<string, number> = {}
  const started: Started = { child, at, cpu }
  return new Promise((done, fail) => {
    const guard = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`not started in 60 s: ${args.join(' ')} (saw ${Object.keys(at).join(', ')})`))
    }, 60_000)
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line.includes('"coldPages"') && !started.release) {
        started.release = {
          ms: performance.now() - t0,
          line: JSON.parse(line) as Record<string, unknown>,
          faults: faults(child.pid as number),
        }
      }
      for (const m of marks)
        if (at[m] === undefined && line.includes(m)) {
          at[m] = performance.now() - t0
          cpu[m] = cpuMs(child.pid)
        }
      if (marks.every((m) => at[m] !== undefined)) {
        clearTimeout(guard)
        done(started)
      }
    })
    child.once('exit', (code) => fail(new Error(`exited (${code}) before it started`)))
  })
}

async function stop(s: Started): Promise<void> {
  if (s.child.exitCode !== null) return
  const exited = new Promise((r) => s.child.once('exit', r))
  s.child.kill('SIGTERM')
  const kill = setTimeout(() => s.child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(kill)
}

/** Page faults of `pid` so far, all its threads: minor (no disk), major (read from disk). */
function faults(pid: number): [number, number] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return [Number(f[7]), Number(f[9])]
  } catch {
    return [0, 0]
  }
}

/** VmRSS, RssAnon and RssFile of `pid` (MB). */
function rssMb(pid: number): [number, number, number] {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / 1024
  return [kb('VmRSS'), kb('RssAnon'), kb('RssFile')]
}

/**
 * Where `pid`'s resident pages are (MB, from /proc's smaps): onnxruntime's native library, node's
 * own binary, the rest of the mapped files; glibc's main heap (`[heap]`: with MALLOC_ARENA_MAX=1
 * every thread's small allocations), and the other anonymous mappings (V8's heaps, thread stacks,
 * allocations too large for the heap).
 */
function rssSplit(pid: number): Record<string, number> {
  const split: Record<string, number> = { ort: 0, node: 0, files: 0, heap: 0, anon: 0 }
  let key = 'anon'
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head) {
      const name = head[1] ?? ''
      key = name.includes('libonnxruntime')
        ? 'ort'
        : name === '[heap]'
          ? 'heap'
          : name.startsWith('/') && name.endsWith('/node')
            ? 'node'
            : name.startsWith('/')
              ? 'files'
              : 'anon'
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss) split[key] = (split[key] ?? 0) + Number(rss[1]) / 1024
  }
  return split
}

const floorSource = `${FLOOR.map((m) => `await import(${JSON.stringify(m)})`).join('; ')}; process.stdout.write('${FLOOR_MARK}\\n'); setInterval(() => {}, 1 << 30)`
const RUN = ['dist/service/cli.js', 'run', '--config']
/** The wake start's lines: the panel begins, the button is watched, the detector listens. */
const WAKE_MARKS = [
  '"panel starting"',
  '"panel started"',
  '"listening for the wake phrase"',
  '"nocturn running"',
]
const kinds = {
  floor: () => start(['--input-type=module', '-e', floorSource], [FLOOR_MARK]),
  speech: (n: number) => start([...RUN, config('speech', n)], ['"nocturn running"']),
  wake: (n: number) => start([...RUN, config('wake', n)], WAKE_MARKS),
  ...(BEFORE && {
    before: (n: number) => start([...RUN, config('wake', n + 100)], WAKE_MARKS, BEFORE),
  }),
}
type Kind = keyof typeof kinds

const times: Record<string, number[]> = {}
const cpus: Record<string, number[]> = {}
const rss: Partial<Record<Kind, number[]>> = {}
const splits: Partial<Record<Kind, Record<string, number>>> = {}
/** Each idle one's faults when it was running, and when read. */
const idleFaults: Partial<Record<Kind, { running: [number, number]; read: [number, number] }>> = {}
out(`# wake start-up · ${machineLine()} · load ${load()}`)
for (let round = 0; round <= RUNS; round++) {
  for (const kind of Object.keys(kinds) as Kind[]) {
    const s = await (kinds[kind] as (n: number) => Promise<Started>)(round)
    if (round > 0) {
      for (const [mark, ms] of Object.entries(s.at)) {
        const key = `${kind} ${mark}`
        times[key] = [...(times[key] ?? []), ms]
        cpus[key] = [...(cpus[key] ?? []), s.cpu[mark] ?? 0]
      }
    }
    await stop(s)
  }
}
// RSS: one more of each, started one after the other and left idle side by side (an idle
// process takes ~1 % of a core), each read IDLE_MS after its own start.
const idle: { kind: Kind; s: Started; at: number }[] = []
for (const kind of Object.keys(kinds) as Kind[]) {
  const s = await (kinds[kind] as (n: number) => Promise<Started>)(RUNS + 1)
  idle.push({ kind, s, at: performance.now() })
  idleFaults[kind] = { running: faults(s.child.pid as number), read: [0, 0] }
}
for (const { kind, s, at } of idle) {
  await sleep(Math.max(0, at + IDLE_MS - performance.now()))
  rss[kind] = rssMb(s.child.pid as number)
  splits[kind] = rssSplit(s.child.pid as number)
  const f = idleFaults[kind]
  if (f) f.read = faults(s.child.pid as number)
}
for (const { s } of idle) await stop(s)
const med = (xs: readonly number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  )
const floor = med(times[`floor ${FLOOR_MARK}`] ?? [])
out(
  `\n${RUNS} rounds, ms from spawn (median, min–max), ratio to the floor's median; load after ${load()}`,
)
out('| process → line | median | min–max | × floor | CPU ms by then (median, min–max) |')
out('|---|---|---|---|---|')
const range = (xs: readonly number[]) =>
  `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`
for (const [k, xs] of Object.entries(times)) {
  const m = med(xs)
  const c = cpus[k] ?? []
  out(
    `| ${k.replace(FLOOR_MARK, 'imported')} | ${m.toFixed(0)} | ${range(xs)} | ${(m / floor).toFixed(2)} | ${med(c).toFixed(0)} (${range(c)}) |`,
  )
}
out(
  `\nRSS after ${IDLE_MS / 1000} s idle (side by side), total (anonymous + file) MB: ${Object.entries(
    rss,
  )
    .map(([k, v]) => `${k} ${v[0]?.toFixed(1)} (${v[1]?.toFixed(1)} + ${v[2]?.toFixed(1)})`)
    .join(', ')}`,
)
out('\n| process | onnxruntime library | node binary | other files | [heap] | other anonymous |')
out('|---|---|---|---|---|---|')
for (const [k, v] of Object.entries(splits))
  out(
    `| ${k} | ${[v.ort, v.node, v.files, v.heap, v.anon].map((x) => x?.toFixed(1)).join(' | ')} |`,
  )
// Wake mode gives back onnxruntime's cold code pages once its load has settled: when, how much,
// and the faults since (minor: a page back from the page cache; major: read from disk again).
out(
  '\n| process | cold pages | at (s from spawn) | library MB before → after | faults since (minor / major) | faults running → read (minor / major) |',
)
out('|---|---|---|---|---|---|')
for (const { kind, s } of idle) {
  const f = idleFaults[kind]
  const r = s.release
  const since = r && f ? `${f.read[0] - r.faults[0]} / ${f.read[1] - r.faults[1]}` : '—'
  const over = f ? `${f.read[0] - f.running[0]} / ${f.read[1] - f.running[1]}` : '—'
  out(
    `| ${kind} | ${r ? String(r.line.coldPages) : '—'} | ${r ? (r.ms / 1000).toFixed(1) : '—'} | ${r?.line.beforeMb ?? '—'} → ${r?.line.afterMb ?? '—'} | ${since} | ${over} |`,
  )
}
await server.close()
gpiod.cleanup()
