import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { hermeticAlsa } from '../helpers/alsa.js'
import { missingCommands } from '../helpers/system.js'
import { admitted, syscallGroups, syscallsByProgram } from './syscall-trace.js'

const ROOT = join(import.meta.dirname, '..', '..')
const UNIT = join(ROOT, 'systemd', 'nocturn.service')

/** Calls the filter refuses on purpose: with SystemCallErrorNumber=EPERM they fail, harmlessly. */
const REFUSED_ON_PURPOSE: Record<string, string> = {
  fchown: 'SQLite gives a new journal its owner only when running as root (the test runs as root)',
  setrlimit: 'node raises its file limit at start and carries on when refused',
}

/**
 * The unit's syscall filter and RestrictRealtime against the real programs Nocturn runs: systemd
 * cannot start units on a build machine, so each program runs under strace instead, on
 * file-backed ALSA devices, and every call it made must be one the unit's filter admits.
 */
describe('the unit sandbox admits what aplay, arecord, gpiomon, PortAudio, bash and node really do', () => {
  const skip = missingCommands('strace', 'systemd-analyze', 'aplay', 'arecord', 'gpiomon')
  const filterLines = readFileSync(UNIT, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('SystemCallFilter='))
    .map((l) => l.slice('SystemCallFilter='.length))
  const traces: string[] = []
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-sandbox-'))

  function traced(name: string, argv: string[], env: NodeJS.ProcessEnv, timeout = 120_000) {
    const log = join(dir, `${name}.strace`)
    traces.push(log)
    const r = spawnSync('strace', ['-f', '-qq', '-o', log, ...argv], {
      env,
      cwd: ROOT,
      encoding: 'utf8',
      timeout,
    })
    return { ...r, calls: syscallsByProgram(log, name) }
  }

  function outside(calls: Set<string> | undefined): string[] {
    const admits = admitted(filterLines, syscallGroups())
    return [...(calls ?? [])].filter((c) => !admits(c) && !(c in REFUSED_ON_PURPOSE)).sort()
  }

  it.skipIf(skip)('aplay and arecord on file-backed PCMs', () => {
    const alsa = hermeticAlsa(Buffer.alloc(32_000, 1), { stall: false })
    const raw = join(dir, 'speech.raw')
    writeFileSync(raw, Buffer.alloc(48_000, 2))
    const play = traced(
      'aplay',
      [
        'aplay',
        '-q',
        '-D',
        alsa.playback,
        '-t',
        'raw',
        '-f',
        'S16_LE',
        '-r',
        '24000',
        '-c',
        '1',
        raw,
      ],
      alsa.env,
    )
    expect(play.status, play.stderr).toBe(0)
    const rec = traced(
      'arecord',
      [
        'arecord',
        '-q',
        '-D',
        alsa.capture,
        '-t',
        'raw',
        '-f',
        'S16_LE',
        '-r',
        '16000',
        '-c',
        '1',
        '-s',
        '8000',
        join(dir, 'rec.raw'),
      ],
      alsa.env,
    )
    expect(rec.status, rec.stderr).toBe(0)
    expect(outside(play.calls.get('aplay'))).toEqual([])
    expect(outside(rec.calls.get('arecord'))).toEqual([])
  })

  it.skipIf(skip)(
    'gpiomon and gpioset (as far as a machine without GPIO chips lets them go)',
    () => {
      for (const [name, argv] of [
        ['gpiomon', ['gpiomon', '--version']],
        ['gpiomon', ['gpiomon', '-b', '-F', '%e %o %s.%n', 'gpiochip0', '17']],
        ['gpioset', ['gpioset', '--version']],
      ] as const) {
        const r = traced(`${name}-${traces.length}`, [...argv], process.env)
        expect(outside(r.calls.get(name)), `${argv.join(' ')}`).toEqual([])
      }
    },
  )

  it.skipIf(skip)('PortAudio (naudiodon) capturing from a file-backed PCM', () => {
    let loads = true
    try {
      createRequire(join(ROOT, 'package.json'))('naudiodon')
    } catch {
      loads = false
    }
    if (!loads) {
      process.stdout.write('skipped: naudiodon (optional) is not built here\n')
      return
    }
    const alsa = hermeticAlsa(Buffer.alloc(64_000, 3), { stall: false })
    const script = join(dir, 'pa.cjs')
    writeFileSync(
      script,
      `const pa = require(${JSON.stringify(join(ROOT, 'node_modules', 'naudiodon'))})
const id = pa.getDevices().findIndex((d) => d.name === ${JSON.stringify(alsa.capture)})
const io = new pa.AudioIO({ inOptions: { channelCount: 1, sampleFormat: 16, sampleRate: 16000,
  deviceId: id, closeOnError: false, highwaterMark: 3200 } })
let n = 0
io.on('data', (b) => { n += b.length; if (n >= 32000) { io.quit(() => {}); setTimeout(() => process.exit(0), 200) } })
io.start()
setTimeout(() => process.exit(3), 20000)
`,
    )
    const r = traced('node', [process.execPath, script], alsa.env)
    expect(r.status, r.stderr).toBe(0)
    expect(outside(r.calls.get('node'))).toEqual([])
  })

  it.skipIf(skip)(
    'node running the whole appliance (the offline run: store, broker, Live socket, wasm VAD)',
    () => {
      const r = traced(
        'node',
        [
          process.execPath,
          '--import',
          'tsx',
          'test/app/offline-run-child.ts',
          mkdtempSync(join(tmpdir(), 'nocturn-sandbox-run-')),
        ],
        process.env,
        600_000,
      )
      expect(r.status, r.stdout).toBe(0)
      expect(outside(r.calls.get('node'))).toEqual([])
    },
    700_000,
  )

  it.skipIf(skip)("the watchdog's bash: heartbeats, then a stuck loop and the kill", () => {
    const script = `
      import { Watchdog } from './src/app/watchdog.ts'
      new Watchdog({ loopLimitMs: 500, intervalMs: 50 })
      await new Promise((r) => setTimeout(r, 500))
      const end = Date.now() + 5000
      while (Date.now() < end) {}
    `
    const r = traced(
      'bash',
      [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
      process.env,
    )
    // strace ends the way its tracee did: killed by the watchdog.
    expect(r.signal).toBe('SIGKILL')
    expect(r.stderr).toContain('"watchdog":"event loop"')
    expect(r.calls.get('bash')?.size).toBeGreaterThan(0)
    expect(outside(r.calls.get('bash'))).toEqual([])
  })

  it.skipIf(skip)('nobody asked for real-time scheduling (RestrictRealtime=yes holds)', () => {
    for (const log of traces) {
      expect(readFileSync(log, 'utf8'), log).not.toMatch(/SCHED_(FIFO|RR|DEADLINE)/)
    }
  })
})
