import { type ChildProcess, spawn } from 'node:child_process'
import { Backoff, type BackoffOptions, DEFAULT_BACKOFF } from '../../audio/backoff.js'
import type { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'
import { StderrTail } from './stderr-tail.js'

export interface SupervisedChildOptions {
  readonly command: string
  readonly args: readonly string[]
  readonly env?: NodeJS.ProcessEnv
  readonly clock: Clock
  readonly logger: Logger
  readonly backoff?: BackoffOptions
  /**
   * A backoff kept by the owner across children it starts anew (a capture restarted by its stall
   * watchdog), so each new supervisor does not begin again from the shortest wait.
   */
  readonly backoffState?: Backoff
  /** stdin is a pipe for a player, ignored for a recorder. */
  readonly stdin: 'pipe' | 'ignore'
  readonly onStdout?: (chunk: Buffer) => void
  /** Builds the error for an exit nobody asked for (the restart is already scheduled). */
  readonly describeExit: (
    exit: { code: number | null; signal: NodeJS.Signals | null; spawnError?: Error },
    stderr: string,
  ) => NocturnError
  readonly onFailure: (error: NocturnError, restartInMs: number) => void
  /** Each new child, e.g. so a capture can forget a half frame from the last one. */
  readonly onSpawn?: (child: ChildProcess) => void
}

/**
 * One long-lived child process that is always either running, being replaced, or waiting out a
 * backoff. An exit is an ordinary event: it becomes an error with the child's last stderr line,
 * and a new child follows after a growing delay. Node reaps every child it spawned, so a killed
 * child never lingers as a zombie; `stop()` waits for the exit so none outlives its owner.
 */
export class SupervisedChild {
  readonly #o: SupervisedChildOptions
  readonly #backoff: Backoff
  #child: ChildProcess | undefined
  #startedAt = 0
  #restartTimer: TimerHandle | undefined
  #stopped = true
  #exits = new Map<ChildProcess, Promise<void>>()
  /** Exits in a row, each after a short life: logged as a summary, not a line per restart. */
  #failures = 0

  constructor(options: SupervisedChildOptions) {
    this.#o = options
    this.#backoff = options.backoffState ?? new Backoff(options.backoff ?? DEFAULT_BACKOFF)
  }

  /** The running child, if any (for writing to its stdin, and for tests to find its pid). */
  get child(): ChildProcess | undefined {
    return this.#child
  }

  start(): void {
    this.#stopped = false
    if (!this.#child && this.#restartTimer === undefined) this.#spawn()
  }

  /** Kills the running child at once and starts the next one now (a drop, not a failure). */
  replace(): void {
    if (this.#stopped) return
    const old = this.#child
    this.#child = undefined
    if (old) old.kill('SIGKILL')
    if (this.#restartTimer !== undefined) return
    this.#spawn()
  }

  /** Kills the child and restarts nothing; resolves once every child has exited. */
  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#restartTimer !== undefined) this.#o.clock.clearTimeout(this.#restartTimer)
    this.#restartTimer = undefined
    const old = this.#child
    this.#child = undefined
    if (old) old.kill('SIGKILL')
    await Promise.all([...this.#exits.values()])
  }

  #spawn(): void {
    const o = this.#o
    const stderr = new StderrTail()
    const child = spawn(o.command, o.args, {
      env: o.env ?? process.env,
      stdio: [o.stdin, o.onStdout ? 'pipe' : 'ignore', 'pipe'],
    })
    this.#child = child
    this.#startedAt = o.clock.now()
    let done = false
    let resolveExit!: () => void
    this.#exits.set(
      child,
      new Promise<void>((r) => {
        resolveExit = r
      }),
    )
    const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      if (done) return
      done = true
      this.#exits.delete(child)
      resolveExit()
      // Killed by us (replaced or stopped): expected, nothing to report.
      if (this.#child !== child) return
      this.#child = undefined
      if (this.#stopped) return
      const error = o.describeExit({ code, signal, spawnError }, stderr.text)
      const lived = o.clock.now() - this.#startedAt
      const delay = this.#backoff.next(lived)
      this.#failures = lived >= (o.backoff ?? DEFAULT_BACKOFF).healthyMs ? 1 : this.#failures + 1
      // The first exit of a streak, then every 20th, at warn; the rest at debug.
      const level = this.#failures === 1 || this.#failures % 20 === 0 ? 'warn' : 'debug'
      o.logger[level](
        {
          command: o.command,
          code,
          signal,
          restartInMs: delay,
          failures: this.#failures,
          err: error.message,
        },
        'audio child ended; restarting',
      )
      this.#restartTimer = o.clock.setTimeout(() => {
        this.#restartTimer = undefined
        if (!this.#stopped) this.#spawn()
      }, delay)
      o.onFailure(error, delay)
    }
    child.on('error', (e) => finish(null, null, e))
    child.on('exit', (code, signal) => finish(code, signal))
    child.stderr?.on('data', (c: Buffer) => stderr.push(c))
    // A dead child's pipes fail with EPIPE/ECONNRESET; the exit event reports it once.
    child.stdin?.on('error', () => {})
    if (o.onStdout && child.stdout) child.stdout.on('data', o.onStdout)
    o.onSpawn?.(child)
  }
}
