// Start-up and idle memory of `nocturn run` beside the import floor (issue 13), in one run:
//
// (a) floor: a fresh `node` that imports ws, mqtt, @google/genai, better-sqlite3 and pino, then
//     prints a line — spawn → that line, on this process's clock (process.hrtime via performance.now);
// (b) `nocturn run --config …` as systemd/nocturn.service starts it (its ExecStart script, the
//     bundle dist/service/cli.js, with its NODE_OPTIONS) — spawn → its structured
//     `nocturn running` log line (the session loop listens), same clock; also the unbundled
//     `node dist/app/cli.js run` (what the bundle buys);
// (c) RSS: VmRSS from /proc/<pid>/status of each process (the appliance's with its watchdog's bash
//     child's, which replaced a worker thread) after it has idled — a short idle after
//     every start (NOCTURN_BENCH_SHORT_IDLE_S, default 5 s) and one long idle at the end
//     (NOCTURN_BENCH_IDLE_S, default 120 s, the issue's 2 minutes) of the floor, the appliance, and
//     the appliance without the unit's NODE_OPTIONS, side by side.
//
// (a) and (b) alternate, NOCTURN_BENCH_RUNS rounds (default 10), after one unmeasured warm-up of
// each (file cache), with (b) also without NODE_OPTIONS (what they cost) and, when
// NOCTURN_BENCH_BEFORE names another built checkout (e.g. the commit before a change), that one. The appliance runs offline the way a household runs it: the compiled CLI, a
// config file, the embedded broker with a paired phone, the fake Live service as the provider, and
// ALSA on a paced PulseAudio null sink (bench/audio/paced-device.ts) — or, without PulseAudio, a
// WAV microphone of silence (said in the output). Needs `npm run build`. Reports; asserts nothing.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { EmbeddedBroker } from '../src/adapters/aedes/broker.js'
import { PhoneKeyStore } from '../src/app/phone-keys.js'
import { wavHeader } from '../src/audio/wav.js'
import { silentLogger } from '../src/core/logger.js'
import { DEFAULT_PREFIX } from '../src/protocol/index.js'
import { FakeLiveServer } from '../src/testing/fake-live-server/index.js'
import { fakeLiveProvider } from '../test/helpers/nocturn-process.js'
import { type PacedDevice, pacedDeviceAvailable, startPacedDevice } from './audio/paced-device.js'
import { machineLine, quantile } from './machine.js'

const ROOT = resolve(import.meta.dirname, '..')
const RUNS = Number(process.env.NOCTURN_BENCH_RUNS ?? 10)
/** Another checkout, built (e.g. the commit before a change): measured too, in the same alternation. */
const BEFORE = process.env.NOCTURN_BENCH_BEFORE
const SHORT_IDLE_MS = Number(process.env.NOCTURN_BENCH_SHORT_IDLE_S ?? 5) * 1000
const LONG_IDLE_MS = Number(process.env.NOCTURN_BENCH_IDLE_S ?? 120) * 1000
const TIMEOUT_MS = 30_000
const FLOOR_IMPORTS = ['ws', 'mqtt', '@google/genai', 'better-sqlite3', 'pino']
const FLOOR_MARK = 'NOCTURN_FLOOR_IMPORTED'

const out = (s: string) => process.stdout.write(`${s}\n`)
const f0 = (n: number) => n.toFixed(0)
const f1 = (n: number) => n.toFixed(1)
const f2 = (n: number) => n.toFixed(2)
const uptime = () => {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' / ')
  } catch {
    return loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')
  }
}

if (!existsSync(join(ROOT, 'dist/app/cli.js'))) {
  process.stderr.write('startup bench: dist/ is missing, run `npm run build` first\n')
  process.exit(1)
}

/** VmRSS of a running process, in MB (10^6 bytes), from /proc. */
function ownRssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? (Number(m[1]) * 1024) / 1e6 : Number.NaN
}

/** The RSS of `pid`'s watchdog child (src/app/watchdog.ts), MB; 0 when it has none. */
function watchdogRssMb(pid: number): number {
  let mb = 0
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const ppid = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]
      if (Number(ppid) !== pid) continue
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('nocturn-watchdog'))
        mb += ownRssMb(Number(d))
    } catch {
      // gone meanwhile
    }
  }
  return mb
}

/**
 * RSS of a process with its watchdog child: the watchdog was a thread inside the process, so its
 * memory counts as the appliance's wherever it lives (aplay/arecord, in every version, do not).
 */
function vmRssMb(pid: number): number {
  return ownRssMb(pid) + watchdogRssMb(pid)
}

interface Started {
  readonly child: ChildProcess
  /** spawn() → the line that says it is ready, ms on this process's monotonic clock. */
  readonly readyMs: number
}

/** Spawns `node args` and resolves when a stdout line satisfies `ready`; the process keeps running. */
function startUntil(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  ready: (line: string) => boolean,
): Promise<Started> {
  return new Promise((done, fail) => {
    const t0 = performance.now()
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const tail: string[] = []
    let settled = false
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      finish(new Error(`not ready within ${TIMEOUT_MS} ms: ${tail.join('\n')}`))
    }, TIMEOUT_MS)
    const finish = (err?: Error, readyMs?: number) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (err) fail(err)
      else done({ child, readyMs: readyMs as number })
    }
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!settled && ready(line)) finish(undefined, performance.now() - t0)
    })
    createInterface({ input: child.stderr }).on('line', (line) => {
      tail.push(line)
      if (tail.length > 20) tail.shift()
    })
    child.on('error', (e) => finish(e))
    child.on('exit', (code) => finish(new Error(`exited ${code} before ready: ${tail.join('\n')}`)))
  })
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  const late = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await gone
  clearTimeout(late)
}

// ---- the world the appliance runs in (none of it counts against the appliance) --------------

const work = mkdtempSync(join(tmpdir(), 'nocturn-bench-startup-'))
const broker = new EmbeddedBroker({ port: 0, prefix: DEFAULT_PREFIX, logger: silentLogger })
await broker.start()
new PhoneKeyStore(join(work, 'phones')).add('anna', "Anna's phone")
const server = await FakeLiveServer.start({ logger: silentLogger, scripts: () => ({ steps: [] }) })
const noPulse = pacedDeviceAvailable()
let pulse: PacedDevice | undefined
let audio: Record<string, unknown>
if (noPulse === undefined) {
  pulse = await startPacedDevice()
  audio = { backend: 'alsa', capturePcm: 'pamon', playbackPcm: 'paplay' }
} else {
  // 16 kHz mono silence, long enough for the longest idle: the file is read whole, so its size is
  // in the appliance's RSS (said in the output).
  const seconds = Math.ceil(LONG_IDLE_MS / 1000) + 30
  const pcm = Buffer.alloc(seconds * 16_000 * 2)
  const header = wavHeader(16_000, pcm.length)
  writeFileSync(join(work, 'silence.wav'), Buffer.concat([header, pcm]))
  audio = {
    backend: 'wav',
    inputWav: join(work, 'silence.wav'),
    outputWav: join(work, 'speaker.wav'),
  }
}
/** One appliance's config; two run side by side in the long idle, so each has its own device id. */
function writeConfig(name: string): string {
  const path = join(work, `${name}.json`)
  writeFileSync(
    path,
    JSON.stringify({
      provider: fakeLiveProvider(server.baseUrl),
      audio,
      panel: { backend: 'none' },
      mqtt: { url: broker.url, deviceId: name },
      phoneApp: { enabled: true, port: 0 },
      phonesDir: join(work, 'phones'),
      store: { path: join(work, `${name}.db`) },
    }),
  )
  return path
}
const config = writeConfig('kitchen')
// The Node options and the allocator setting the systemd unit runs the appliance with: what is
// measured is what is installed.
const unitSetting = (name: string) =>
  new RegExp(`^Environment=${name}=(.*)$`, 'm').exec(
    readFileSync(join(ROOT, 'systemd/nocturn.service'), 'utf8'),
  )?.[1] ?? ''
const unitNodeOptions = unitSetting('NODE_OPTIONS')
const unitArenaMax = unitSetting('MALLOC_ARENA_MAX')
const unitTuning = [
  unitNodeOptions && `NODE_OPTIONS=${unitNodeOptions}`,
  unitArenaMax && `MALLOC_ARENA_MAX=${unitArenaMax}`,
]
  .filter(Boolean)
  .join(' ')
// The script the unit starts, relative to the install directory (/opt/nocturn = this checkout).
const unitEntry =
  /^ExecStart=\S+ \/opt\/nocturn\/(\S+) run /m.exec(
    readFileSync(join(ROOT, 'systemd/nocturn.service'), 'utf8'),
  )?.[1] ?? 'dist/app/cli.js'
if (!existsSync(join(ROOT, unitEntry))) {
  process.stderr.write(`startup bench: ${unitEntry} is missing, run \`npm run build\` first\n`)
  process.exit(1)
}
const applianceEnv: NodeJS.ProcessEnv = {
  ...process.env,
  ...pulse?.env,
  GEMINI_API_KEY: 'bench-key-not-for-logs',
  NOCTURN_LOG_LEVEL: 'info',
  NODE_OPTIONS: unitNodeOptions,
  ...(unitArenaMax && { MALLOC_ARENA_MAX: unitArenaMax }),
}
const floorSource = `${FLOOR_IMPORTS.map((m) => `await import(${JSON.stringify(m)})`).join('; ')}; process.stdout.write('${FLOOR_MARK}\\n'); setInterval(() => {}, 1 << 30)`

// NOCTURN_BENCH_NODE_ARGS: node options for a look inside the appliance's start (e.g. `--cpu-prof
// --cpu-prof-dir=/tmp/prof`; node refuses those in NODE_OPTIONS).
const inspectArgs = (process.env.NOCTURN_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
const floor = () =>
  startUntil(['--input-type=module', '-e', floorSource], process.env, (l) => l === FLOOR_MARK)
const appliance = (path = config, env = applianceEnv, root = ROOT, entry = unitEntry) =>
  startUntil([...inspectArgs, join(root, entry), 'run', '--config', path], env, (l) => {
    if (!l.startsWith('{')) return false
    try {
      return (JSON.parse(l) as { msg?: string }).msg === 'nocturn running'
    } catch {
      return false
    }
  })

/** Starts, idles `idleMs`, reads VmRSS, stops. */
async function sample(start: () => Promise<Started>, idleMs: number) {
  const s = await start()
  await sleep(idleMs)
  const rss = vmRssMb(s.child.pid as number)
  await stop(s.child)
  return { ms: s.readyMs, rss }
}

out(machineLine())
out(`load average (1/5/15 min) at start: ${uptime()}`)
if (BEFORE) out(`before: ${BEFORE} (run without NODE_OPTIONS)`)
out(
  `nocturn run's NODE_OPTIONS and MALLOC_ARENA_MAX (from systemd/nocturn.service): ${unitTuning || 'none'}`,
)
out(`nocturn run's script (from systemd/nocturn.service): ${unitEntry}`)
out(`audio: ${pulse ? 'ALSA on a paced PulseAudio null sink' : `WAV silence (${noPulse})`}`)
const loads = [uptime()]
try {
  await sample(floor, 0)
  await sample(() => appliance(), 0)
  // Alternating, one of each per round. The appliance also runs without the unit's NODE_OPTIONS
  // (what they cost at start), and a checkout before runs as it ran then, without them too.
  const bare: NodeJS.ProcessEnv = { ...applianceEnv, NODE_OPTIONS: '' }
  delete bare.MALLOC_ARENA_MAX
  const variants: { name: string; start: () => Promise<Started> }[] = [
    { name: `floor: import ${FLOOR_IMPORTS.join(', ')}`, start: floor },
    { name: '`nocturn run`', start: () => appliance() },
    ...(unitTuning
      ? [{ name: `\`nocturn run\` without ${unitTuning}`, start: () => appliance(config, bare) }]
      : []),
    ...(unitEntry !== 'dist/app/cli.js'
      ? [
          {
            name: '`node dist/app/cli.js run` (not bundled)',
            start: () => appliance(config, applianceEnv, ROOT, 'dist/app/cli.js'),
          },
        ]
      : []),
    ...(BEFORE
      ? [
          {
            name: 'before',
            // A checkout from before the bundle runs its CLI; a later one what its unit runs.
            start: () =>
              appliance(
                config,
                bare,
                BEFORE,
                existsSync(join(BEFORE, unitEntry)) ? unitEntry : 'dist/app/cli.js',
              ),
          },
        ]
      : []),
  ]
  for (const v of variants) await sample(v.start, 0)
  const runs = variants.map(() => [] as { ms: number; rss: number }[])
  for (let i = 0; i < RUNS; i++) {
    const line: string[] = []
    for (const [k, v] of variants.entries()) {
      const r = await sample(v.start, SHORT_IDLE_MS)
      runs[k]?.push(r)
      line.push(`${f0(r.ms)} ms ${f1(r.rss)} MB`)
    }
    out(`  round ${i + 1}: ${line.join(' · ')}`)
  }
  loads.push(uptime())
  // The long idle: side by side (memory does not depend on the others' CPU), RSS every 10 s.
  const [lf, la, lb] = await Promise.all([
    floor(),
    appliance(),
    appliance(writeConfig('hall'), bare),
  ])
  const trail: string[] = []
  for (let t = 0; t < LONG_IDLE_MS; t += 10_000) {
    await sleep(Math.min(10_000, LONG_IDLE_MS - t))
    trail.push(f1(vmRssMb(la.child.pid as number)))
  }
  const longFloor = vmRssMb(lf.child.pid as number)
  const longApp = vmRssMb(la.child.pid as number)
  const longBare = vmRssMb(lb.child.pid as number)
  const longWatchdog = watchdogRssMb(la.child.pid as number)
  await Promise.all([stop(lf.child), stop(la.child), stop(lb.child)])
  loads.push(uptime())

  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)
  const row = (name: string, xs: number[], unit: string, digits: (n: number) => string) => {
    const s = sorted(xs)
    return `| ${name} | ${digits(quantile(s, 0.5))} ${unit} | ${digits(quantile(s, 0.25))}–${digits(quantile(s, 0.75))} | ${digits(s[0] ?? Number.NaN)}–${digits(s.at(-1) ?? Number.NaN)} |`
  }
  const fl = runs[0] ?? []
  out('')
  out(`${RUNS} alternating rounds; RSS after ${SHORT_IDLE_MS / 1000} s idle:`)
  out('')
  out('| measure | median | p25–p75 | min–max |')
  out('|---|---|---|---|')
  for (const [k, v] of variants.entries()) {
    const xs = runs[k] ?? []
    out(
      row(
        `${v.name}: spawn → ready`,
        xs.map((x) => x.ms),
        'ms',
        f0,
      ),
    )
    if (k > 0) {
      const ratio = xs.map((x, i) => x.ms / (fl[i]?.ms ?? Number.NaN))
      out(row(`${v.name} ÷ floor, pairwise`, ratio, '×', f2))
    }
  }
  for (const [k, v] of variants.entries()) {
    out(
      row(
        `${v.name}: RSS`,
        (runs[k] ?? []).map((x) => x.rss),
        'MB',
        f1,
      ),
    )
  }
  out('')
  const median = (k: number) => quantile(sorted((runs[k] ?? []).map((x) => x.ms)), 0.5)
  out(
    `Ratio of medians: ${f2(median(1) / median(0))}× the floor (target ≤ 1.15×). After ${LONG_IDLE_MS / 1000} s idle (one run, side by side): \`nocturn run\` ${f1(longApp)} MB (target ≤ 80 MB; its watchdog's bash ${f1(longWatchdog)} MB of it), floor ${f1(longFloor)} MB, ${unitTuning ? `\`nocturn run\` without ${unitTuning}` : 'a second `nocturn run`'} ${f1(longBare)} MB. \`nocturn run\` RSS every 10 s: ${trail.join(' · ')} MB.`,
  )
  out(
    `Load average (1/5/15 min): start ${loads[0]}, after the starts ${loads[1]}, end ${loads[2]}.`,
  )
} finally {
  await pulse?.stop()
  await server.close()
  await broker.stop()
  rmSync(work, { recursive: true, force: true })
}
