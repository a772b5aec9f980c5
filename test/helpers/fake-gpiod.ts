import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

const SCRIPT = join(import.meta.dirname, '..', 'fixtures', 'gpiod', 'fake-gpiod.mjs')

interface FakeGpiodLogEntry {
  tool: string
  event: 'spawn' | 'start' | 'stop' | 'died' | 'rejected' | 'exit-at-once'
  argv: string[]
  pid: number
  t: number
  sig?: string
  msg?: string
}

export interface FakeGpiod {
  env: NodeJS.ProcessEnv
  dir: string
  /**
   * Edges gpiomon prints, one script per start: e.g. [[{ ms: 5, edge: 'falling' }]]; a step with
   * `whenFile` waits for that file in `dir` first (`release()` below writes it); `agoMs` stamps
   * the edge that long before it is printed, as the kernel does for an edge read late.
   */
  scriptMonitor(
    scripts: Array<
      Array<{
        ms: number
        edge?: 'rising' | 'falling'
        agoMs?: number
        exit?: number
        whenFile?: string
      }>
    >,
  ): void
  /** Lets the steps waiting for `name` go on. */
  release(name: string): void
  log(): FakeGpiodLogEntry[]
  cleanup(): void
}

/** Stand-in gpiomon/gpioset/gpiofind first on PATH, speaking libgpiod `version`'s command line. */
export function fakeGpiod(version: 1 | 2): FakeGpiod {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-gpiod-'))
  const bin = join(dir, 'bin')
  writeFileSync(join(dir, 'log'), '')
  const tools =
    version === 1 ? ['gpiomon', 'gpioset', 'gpiofind'] : ['gpiomon', 'gpioset', 'gpioinfo']
  mkdirSync(bin, { recursive: true })
  for (const tool of tools) {
    const p = join(bin, tool)
    // The shell logs the spawn before node boots: a stand-in killed while still starting up (the
    // LED restarted again at once) is counted too.
    writeFileSync(
      p,
      [
        '#!/bin/sh',
        // Shell parameter expansion, not a template: a comma between items.
        'args=""; sep=""; for a in "$@"; do args="$args$sep\\"$a\\""; sep=","; done',
        `printf '{"tool":"${tool}","event":"spawn","argv":[%s],"pid":%s,"t":0}\\n' "$args" "$$" >> "$FAKE_GPIOD_DIR/log"`,
        `exec "${process.execPath}" "${SCRIPT}" ${tool} "$@"`,
        '',
      ].join('\n'),
    )
    chmodSync(p, 0o755)
  }
  return {
    dir,
    env: {
      ...process.env,
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
      FAKE_GPIOD_VERSION: String(version),
      FAKE_GPIOD_DIR: dir,
    },
    scriptMonitor(scripts) {
      writeFileSync(join(dir, 'gpiomon.json'), JSON.stringify(scripts))
    },
    release(name) {
      writeFileSync(join(dir, name), '')
    },
    log() {
      const file = join(dir, 'log')
      if (!existsSync(file)) return []
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .flatMap((l) => {
          // The last line may be half written by a stand-in that is writing right now.
          try {
            return [JSON.parse(l) as FakeGpiodLogEntry]
          } catch {
            return []
          }
        })
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Pids of live stand-ins started for this fake (found by their FAKE_GPIOD_DIR in /proc). */
export function liveStandIns(fake: FakeGpiod): number[] {
  const mark = `FAKE_GPIOD_DIR=${fake.dir}\0`
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const env = readFileSync(`/proc/${p}/environ`, 'utf8')
        return env.includes(mark)
      } catch {
        return false
      }
    })
    .map(Number)
}

/** Children of this process that exited and were never reaped (state Z). */
export function zombieChildren(): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8')
        const [, state, ppid] = /\) (\S) (\d+)/.exec(stat) ?? []
        return state === 'Z' && Number(ppid) === process.pid
      } catch {
        return false
      }
    })
    .map(Number)
}

/** True when no process with this pid is alive (it exited and was reaped). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

/** Polls `fn` until it returns true, or throws after `ms`. */
export async function waitFor(fn: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}
