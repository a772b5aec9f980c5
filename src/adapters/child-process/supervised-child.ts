import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { Backoff } from '../../core/backoff.js'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'
import { StderrTail } from './stderr-tail.js'
import { openStdoutSocket, type StdoutSocket } from './stdout-socket.js'

/** How a child ended. */
export interface ChildExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** The child never ran: not installed, not executable, bad arguments. */
  readonly spawnError?: Error
}

export interface SupervisedChildOptions<E extends Error = Error> {
  readonly command: string
  /**
   * Read at every spawn, so a child started anew can be given new arguments (the LED's next
   * level). Never a secret: every user of the machine can read a process's argv; use `env`.
   */
  readonly args: readonly string[] | (() => readonly string[])
  readonly env?: NodeJS.ProcessEnv | undefined
  readonly clock: Clock
  readonly logger: Logger
  /**
   * The wait before each restart, passed in so an owner can keep it across children it starts
   * anew (a capture restarted by its stall watchdog). Its `healthyMs` is how long a child must
   * live for the next exit to count as the first again; its `giveUpAfter`, how many exits in a
   * row end the restarting.
   */
  readonly backoff: Backoff
  /** A pipe for a player that is fed on stdin; ignored when absent. */
  readonly stdin?: 'pipe' | 'ignore'
  /**
   * stdout as it comes (audio), read through a socket into one reused buffer (stdout-socket.ts):
   * the chunk is valid only during the call, so copy what you keep. The child then starts a
   * moment after `start()`, once the socket is connected (`start()` resolves then). Returning
   * false stops reading (the child's writes wait in the socket) until `resumeStdout()` or
   * `readStdoutNow()`.
   */
  readonly onStdout?: (chunk: Uint8Array) => unknown
  /** stdout line by line (a tool that prints events). */
  readonly onLine?: (line: string) => void
  /**
   * SIGKILL ends a child at once (a player whose queued audio must stop now). SIGTERM, the
   * default, lets it release what it holds (a GPIO line) and is followed by SIGKILL if it lingers.
   */
  readonly killSignal?: 'SIGTERM' | 'SIGKILL'
  /** Turns an exit nobody asked for, with the child's last stderr, into the error to report. */
  readonly describeExit: (exit: ChildExit, stderr: string) => E
  /** An exit nobody asked for: the next child starts in `restartInMs`, or never (given up). */
  readonly onFailure?: (error: E, restartInMs: number | undefined) => void
  /** A child has lived `healthyMs` after one or more failures. */
  readonly onHealthy?: () => void
  /** Each new child, e.g. so a capture can forget a half frame from the last one. */
  readonly onSpawn?: (child: ChildProcess) => void
}

/** How long a child asked to end with SIGTERM has before SIGKILL. */
const KILL_GRACE_MS = 1000
/** How long an ended child's output may take to be read to its end before its exit is reported. */
const DRAIN_LIMIT_MS = 250

/**
 * One long-lived helper process (`aplay`, `arecord`, `gpiomon`, `gpioset`) that is always either
 * running, being replaced, or waiting out its backoff. An exit is an ordinary event: it becomes an
 * error with the child's last stderr, and a new child follows after a growing delay. Node reaps
 * every child it spawned, so a killed one never lingers as a zombie; `stop()` waits for every exit,
 * so none outlives its owner holding a device or a GPIO line.
 *
 * Shared by the ALSA and gpiod adapters, which may not import each other: it lives in
 * `adapters/child-process/`, support for adapters that implements no port (docs/architecture.md).
 */
export class SupervisedChild<E extends Error = Error> {
  readonly #options: SupervisedChildOptions<E>
  #child: ChildProcess | undefined
  #wanted = false
  #gaveUp = false
  #restartTimer: TimerHandle | undefined
  #healthyTimer: TimerHandle | undefined
  /** A child whose stdout socket is being connected; it is launched when that is done. */
  #pending: Promise<void> | undefined
  /** Bumped by stop(), so a child set up before it is never launched after it. */
  #generation = 0
  readonly #exits = new Map<ChildProcess, Promise<void>>()
  readonly #sockets = new Map<ChildProcess, StdoutSocket>()

  constructor(options: SupervisedChildOptions<E>) {
    this.#options = options
  }

  /** The running child, if any (for writing to its stdin, and for tests to find its pid). */
  get child(): ChildProcess | undefined {
    return this.#child
  }

  get running(): boolean {
    return this.#child !== undefined
  }

  /** Reads the running child's stdout again after `onStdout` returned false. */
  resumeStdout(): void {
    if (this.#child) this.#sockets.get(this.#child)?.resume()
  }

  /** `resumeStdout()`, what already waits handed on now (StdoutSocket's `readNow`). */
  readStdoutNow(): void {
    if (this.#child) this.#sockets.get(this.#child)?.readNow()
  }

  /** Exits in a row since a child was last healthy. */
  get failures(): number {
    return this.#options.backoff.failures
  }

  /**
   * Starts the first child; after a give-up, tries again from the shortest wait. Resolves once it
   * has been launched (or failed to), which with `onStdout` is a moment later.
   */
  start(): Promise<void> {
    this.#wanted = true
    if (this.#gaveUp) {
      this.#gaveUp = false
      this.#options.backoff.reset()
    }
    if (!this.#child && !this.#pending && this.#restartTimer === undefined) this.#spawn()
    return this.#pending ?? Promise.resolve()
  }

  /**
   * Kills the running child and starts the next one now, without waiting for the old one to go
   * (a drop, not a failure: the speaker's queued audio must end at once). Waiting out a backoff,
   * it starts nothing early.
   */
  replace(): void {
    if (!this.#wanted || this.#gaveUp) return
    const old = this.#child
    this.#child = undefined
    if (old) void this.#kill(old)
    if (this.#restartTimer === undefined && !this.#pending) this.#spawn()
  }

  /**
   * Ends the running child, and once it has exited starts the next one (a gpioset holding a new
   * level: the old one must release the line before the next requests it).
   */
  async restart(): Promise<void> {
    const old = this.#child
    this.#child = undefined
    this.#clearHealthy()
    if (old) await this.#kill(old)
    if (
      this.#wanted &&
      !this.#gaveUp &&
      !this.#child &&
      !this.#pending &&
      this.#restartTimer === undefined
    )
      this.#spawn()
  }

  /** Kills the child and restarts nothing; resolves once every child has exited. */
  async stop(): Promise<void> {
    this.#wanted = false
    this.#generation++
    if (this.#restartTimer !== undefined) this.#options.clock.clearTimeout(this.#restartTimer)
    this.#restartTimer = undefined
    this.#clearHealthy()
    const old = this.#child
    this.#child = undefined
    if (old) void this.#kill(old)
    await this.#pending
    await Promise.all([...this.#exits.values()])
  }

  #spawn(): void {
    const onStdout = this.#options.onStdout
    if (!onStdout) {
      this.#launch(undefined)
      return
    }
    const generation = this.#generation
    const pending = openStdoutSocket(onStdout)
      .then(
        (socket) => {
          if (generation === this.#generation && this.#wanted) this.#launch(socket)
          else socket.close()
        },
        (err: unknown) => {
          const spawnError = err instanceof Error ? err : new Error(errorText(err))
          if (generation === this.#generation)
            this.#failed({ code: null, signal: null, spawnError }, '', 0)
        },
      )
      .finally(() => {
        if (this.#pending === pending) this.#pending = undefined
      })
    this.#pending = pending
  }

  #launch(socket: StdoutSocket | undefined): void {
    const o = this.#options
    const args = typeof o.args === 'function' ? o.args() : o.args
    let child: ChildProcess
    try {
      child = spawn(o.command, [...args], {
        env: o.env ?? process.env,
        stdio: [o.stdin ?? 'ignore', socket?.childEnd ?? (o.onLine ? 'pipe' : 'ignore'), 'pipe'],
      })
    } catch (err) {
      socket?.close()
      // Some bad arguments throw here instead of emitting 'error'.
      const spawnError = err instanceof Error ? err : new Error(errorText(err))
      this.#failed({ code: null, signal: null, spawnError }, '', 0)
      return
    }
    socket?.handedOver()
    if (socket) this.#sockets.set(child, socket)
    this.#child = child
    const startedAt = o.clock.now()
    const stderr = new StderrTail()
    let done = false
    let resolveExit!: () => void
    this.#exits.set(
      child,
      new Promise<void>((r) => {
        resolveExit = r
      }),
    )
    const finish = (exit: ChildExit) => {
      if (done) return
      done = true
      // Its stdout socket ends by itself once what it wrote is read (EOF closes it), even one
      // `onStdout` had paused: the audio it holds is the last the child heard.
      const drained = this.#sockets.get(child)?.drain()
      this.#sockets.delete(child)
      this.#exits.delete(child)
      resolveExit()
      // Killed by us (replaced, restarted or stopped): expected, nothing to report.
      if (this.#child !== child) return
      this.#child = undefined
      const livedMs = o.clock.now() - startedAt
      // Reported once what it wrote before dying is handed on: its last frames, read after the
      // failure, would otherwise say the device hears again (a microphone read in bursts holds up
      // to a burst). A child whose output never closes is reported after DRAIN_LIMIT_MS all the same.
      if (!drained) return this.#failed(exit, stderr.text, livedMs)
      let reported = false
      const report = () => {
        if (reported) return
        reported = true
        o.clock.clearTimeout(limit)
        this.#failed(exit, stderr.text, livedMs)
      }
      const limit = o.clock.setTimeout(report, DRAIN_LIMIT_MS)
      void drained.then(report)
    }
    // 'error' is an exit only when the child never started (no pid); otherwise 'exit' follows.
    child.on('error', (e) => {
      if (child.pid === undefined) finish({ code: null, signal: null, spawnError: e })
    })
    child.on('exit', (code, signal) => finish({ code, signal }))
    child.stderr?.on('data', (c: Buffer) => stderr.push(c))
    // A dead child's pipes fail with EPIPE/ECONNRESET; its exit reports it once.
    child.stdin?.on('error', () => {})
    if (child.stdout) {
      const onLine = o.onLine
      if (onLine) {
        const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY })
        lines.on('line', (line) => onLine(line))
      }
    }
    o.logger.debug({ command: o.command, args, pid: child.pid }, 'child process started')
    this.#armHealthy()
    o.onSpawn?.(child)
  }

  #failed(exit: ChildExit, stderr: string, livedMs: number): void {
    this.#clearHealthy()
    if (!this.#wanted) return
    const o = this.#options
    const error = o.describeExit(exit, stderr)
    const delay = o.backoff.next(livedMs)
    const fields = {
      event: 'child_process_ended',
      command: o.command,
      code: exit.code,
      signal: exit.signal,
      failures: o.backoff.failures,
      err: errorText(error),
    }
    if (o.backoff.exhausted) {
      this.#gaveUp = true
      o.logger.error(
        { ...fields, event: 'child_process_gave_up' },
        'child process keeps ending; not restarting it',
      )
      o.onFailure?.(error, undefined)
      return
    }
    // The first exit of a streak, then every 20th, at warn; the rest at debug: a device that
    // stays gone must not fill the log.
    const level = fields.failures === 1 || fields.failures % 20 === 0 ? 'warn' : 'debug'
    o.logger[level]({ ...fields, restartInMs: delay }, 'child process ended; restarting')
    this.#restartTimer = o.clock.setTimeout(() => {
      this.#restartTimer = undefined
      if (this.#wanted && !this.#child && !this.#pending) this.#spawn()
    }, delay)
    o.onFailure?.(error, delay)
  }

  #kill(child: ChildProcess): Promise<void> {
    // Killed on purpose: nothing it still wrote may reach the next child's reader.
    this.#sockets.get(child)?.close()
    this.#sockets.delete(child)
    const exited = this.#exits.get(child) ?? Promise.resolve()
    const signal = this.#options.killSignal ?? 'SIGTERM'
    child.kill(signal)
    if (signal === 'SIGKILL') return exited
    // Real time on purpose: a stuck child must die even when the app runs on a virtual clock.
    const force = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS)
    return exited.finally(() => clearTimeout(force))
  }

  #armHealthy(): void {
    this.#clearHealthy()
    const healthyMs = this.#options.backoff.policy.healthyMs
    if (healthyMs === undefined) return
    this.#healthyTimer = this.#options.clock.setTimeout(() => {
      this.#healthyTimer = undefined
      const recovered = this.#options.backoff.failures > 0
      this.#options.backoff.reset()
      if (recovered) this.#options.onHealthy?.()
    }, healthyMs)
  }

  #clearHealthy(): void {
    if (this.#healthyTimer !== undefined) this.#options.clock.clearTimeout(this.#healthyTimer)
    this.#healthyTimer = undefined
  }
}
