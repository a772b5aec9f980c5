import { type ChildProcess, spawn } from 'node:child_process'
import { writeSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { errorText } from '../core/errors.js'

export interface WatchdogOptions {
  /** The event loop must tick at least this often (ms). */
  readonly loopLimitMs?: number
  /** Named feeds and how long each may go unfed (ms), e.g. { microphone: 10_000 }. */
  readonly feeds?: Readonly<Record<string, number>>
  /** How often the main thread proves it is alive and looks at its feeds (ms). */
  readonly intervalMs?: number
  /** What to do when a limit is passed; default: write a line to stderr and SIGKILL this process. */
  readonly action?: 'kill' | 'report'
  /** Called (on the main thread, once it runs again) for each stall in `report` mode. */
  readonly onStall?: (what: string, silentMs: number) => void
}

/**
 * The process's watchdog (systemd/README.md, "The watchdog"). A stuck event loop runs no handler,
 * so the one check that must live outside the loop is done by a tiny `bash` child: the main thread
 * writes a heartbeat line to its stdin every `intervalMs`, and when none arrives within
 * `loopLimitMs` the child writes one JSON line to stderr (the journal) and SIGKILLs this process —
 * SIGKILL, because a stuck loop would never run a SIGTERM handler — and systemd's
 * `Restart=on-failure` starts it again. bash costs ≈ 4 MB of RSS (mostly shared pages) where a
 * worker thread was a second V8 isolate of ≈ 10 MB, and it is on every Debian and Pi OS system
 * (an Essential package); systemd's own `WatchdogSec=` would need a notifier process spawned for
 * every ping, and nothing here to prove it on a machine without systemd. The feeds (e.g. the
 * microphone delivering frames) are checked by the main thread itself, on the same timer: while
 * the loop runs it can look, and when it does not the loop check fires first; the time a look
 * came late by (the loop held) is not counted as a feed's silence, as the capture watchdog counts
 * its own (audio/capture-watchdog.ts).
 */
export class Watchdog {
  readonly #child: ChildProcess | undefined
  readonly #timer: NodeJS.Timeout
  readonly #feeds = new Map<string, { readonly limitMs: number; last: number }>()
  readonly #reported = new Set<string>()
  #lookedAt = performance.now()

  constructor(opts: WatchdogOptions = {}) {
    const interval = opts.intervalMs ?? 1000
    const loopLimit = opts.loopLimitMs ?? 15_000
    const action = opts.action ?? 'kill'
    const now = performance.now()
    for (const [name, limitMs] of Object.entries(opts.feeds ?? {})) {
      if (limitMs > 0) this.#feeds.set(name, { limitMs, last: now })
    }
    if (loopLimit > 0) {
      // Not a shell string built from values: the script is constant, the values are arguments.
      const child = spawn(
        'bash',
        [
          // No start-up files: Node's stdin pipe is a socket, which bash takes for a remote shell
          // and reads ~/.bashrc (as another user: "/root/.bashrc: Permission denied"); BASH_ENV
          // is left out of its environment below for the same reason.
          '--norc',
          '--noprofile',
          '-c',
          LOOP_WATCH,
          'nocturn-watchdog',
          (loopLimit / 1000).toFixed(3),
          action,
          `${process.pid}`,
          stalledFormat('event loop'),
        ],
        {
          stdio: ['pipe', action === 'report' ? 'pipe' : 'ignore', 'inherit'],
          env: withoutStartupFiles(process.env),
        },
      )
      child.on('error', (err) => failed(err))
      // A heartbeat written after the child is gone (it failed, or was killed) is not an error of ours.
      child.stdin?.on('error', () => {})
      if (child.stdout) {
        createInterface({ input: child.stdout }).on('line', (line) => {
          const m = /^stalled (\d+)$/.exec(line)
          if (m) opts.onStall?.('event loop', Number(m[1]))
        })
      }
      // A watchdog must never be what keeps a process alive (a failed start has to exit, not hang
      // with only its watchdog running): neither the child nor its pipes hold the event loop.
      child.unref()
      ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
      ;(child.stdout as unknown as { unref?: () => void } | null)?.unref?.()
      this.#child = child
    }
    this.#timer = setInterval(() => {
      this.#child?.stdin?.write('\n')
      this.#look(interval, action, opts.onStall)
    }, interval)
    this.#timer.unref()
  }

  /** Proves that `name` (one of the configured feeds) is still delivering. */
  feed(name: string): void {
    const f = this.#feeds.get(name)
    if (f) f.last = performance.now()
  }

  /** Stops watching: the child sees its stdin close and exits by itself. */
  async stop(): Promise<void> {
    clearInterval(this.#timer)
    this.#child?.stdin?.end()
  }

  #look(interval: number, action: 'kill' | 'report', onStall: WatchdogOptions['onStall']): void {
    const now = performance.now()
    // A look that comes late found the event loop held (a busy start, a CPU quota): no feed could
    // be fed meanwhile, and their callbacks run after this one. That time is not a feed's silence;
    // a loop held too long is the child's to end.
    const held = Math.max(0, now - this.#lookedAt - interval)
    this.#lookedAt = now
    for (const [name, f] of this.#feeds) {
      f.last = Math.min(now, f.last + held)
      const silentMs = Math.round(now - f.last)
      if (silentMs <= f.limitMs) {
        this.#reported.delete(name)
        continue
      }
      if (action === 'kill') {
        writeSync(2, `${stalledLine(name, silentMs)}\n`)
        process.kill(process.pid, 'SIGKILL')
      } else if (!this.#reported.has(name)) {
        this.#reported.add(name)
        onStall?.(name, silentMs)
      }
    }
  }
}

/**
 * The journal line of a stall, as a printf format with two `%s`: the time (epoch ms) and how long
 * `what` was silent. One definition for both writers: the main thread (a feed) and the bash
 * child (the event loop), which gets it as an argument. `what` is one of ours, never input.
 */
function stalledFormat(what: string): string {
  return JSON.stringify({
    level: 60,
    time: 0,
    app: 'nocturn',
    event: 'watchdog_stalled',
    watchdog: what,
    silentMs: 0,
    msg: `watchdog: ${what} stalled`,
  })
    .replace('"time":0', '"time":%s')
    .replace('"silentMs":0', '"silentMs":%s')
}

function stalledLine(what: string, silentMs: number): string {
  return stalledFormat(what).replace('%s', `${Date.now()}`).replace('%s', `${silentMs}`)
}

/** A watchdog that failed must not take the appliance down with it; say so and carry on. */
function failed(err: unknown): void {
  process.stderr.write(
    `${JSON.stringify({ level: 50, app: 'nocturn', event: 'watchdog_failed', msg: 'watchdog failed', err: errorText(err) })}\n`,
  )
}

// bash, for `read -t` (fractional seconds) and $EPOCHREALTIME. $1 the limit in seconds, $2 kill or
// report, $3 the pid to kill, $4 the stall line's format (`stalledFormat`). A heartbeat is one line on stdin; end of file (the process closed the
// pipe, or is gone) ends the watch. In report mode a stall is said once on stdout, as
// `stalled <ms>`, and the watch resumes with the next heartbeat.
const LOOP_WATCH = `
last=\${EPOCHREALTIME/./}
while :; do
  IFS= read -r -t "$1" _
  s=$?
  if [ "$s" -eq 0 ]; then last=\${EPOCHREALTIME/./}; continue; fi
  if [ "$s" -le 128 ]; then exit 0; fi
  now=\${EPOCHREALTIME/./}
  silent=$(( (now - last) / 1000 ))
  if [ "$2" = kill ]; then
    printf "$4\\n" "$(( now / 1000 ))" "$silent" >&2
    kill -KILL "$3"
    exit 0
  fi
  printf 'stalled %s\\n' "$silent"
  IFS= read -r _ || exit 0
  last=\${EPOCHREALTIME/./}
done
`

/** The environment without what makes a non-interactive bash source a file (BASH_ENV, ENV). */
function withoutStartupFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { BASH_ENV: _bashEnv, ENV: _env, ...rest } = env
  return rest
}
