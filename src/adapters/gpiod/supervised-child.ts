import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { Logger } from '../../core/logger.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'

export interface SupervisedChildOptions {
  readonly command: string
  readonly args: () => readonly string[]
  readonly env?: NodeJS.ProcessEnv
  readonly clock: Clock
  readonly logger: Logger
  /** Each stdout line. */
  readonly onLine?: (line: string) => void
  /** The child died without being asked to (after `start`, before `stop`). */
  readonly onDeath?: (info: { code: number | null; signal: string | null; stderr: string }) => void
  /** The child has run long enough after a death to count as healthy again. */
  readonly onHealthy?: () => void
  /** First restart delay; doubles per consecutive death up to `maxBackoffMs`. */
  readonly backoffMs?: number
  readonly maxBackoffMs?: number
  /** Alive this long after a (re)start: the backoff resets. */
  readonly healthyAfterMs?: number
}

/**
 * A long-lived helper process (gpiomon, gpioset) that is restarted with backoff when it dies, and
 * that `stop()` ends for sure: SIGTERM, then SIGKILL, always awaiting the exit so nothing is left
 * behind. Node reaps exited children itself; what must not happen is a child outliving us holding
 * a GPIO line, or a restart storm.
 */
export class SupervisedChild {
  readonly #o: SupervisedChildOptions
  #child: ChildProcess | undefined
  #exited: Promise<void> = Promise.resolve()
  #wanted = false
  #failures = 0
  #restartTimer: TimerHandle | undefined
  #healthyTimer: TimerHandle | undefined

  constructor(opts: SupervisedChildOptions) {
    this.#o = opts
  }

  get running(): boolean {
    return this.#child !== undefined
  }

  get pid(): number | undefined {
    return this.#child?.pid
  }

  /** Consecutive deaths since the child was last healthy. */
  get failures(): number {
    return this.#failures
  }

  start(): void {
    this.#wanted = true
    if (!this.#child && !this.#restartTimer) this.#spawn()
  }

  /** Stops the current child and starts a new one (e.g. gpioset with a new value). */
  async restart(): Promise<void> {
    await this.#kill()
    if (this.#wanted && !this.#restartTimer) this.#spawn()
  }

  async stop(): Promise<void> {
    this.#wanted = false
    this.#clearTimers()
    await this.#kill()
  }

  #spawn(): void {
    const { command, clock, logger } = this.#o
    const args = this.#o.args()
    let child: ChildProcess
    try {
      child = spawn(command, [...args], {
        env: this.#o.env ?? process.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    } catch (err) {
      this.#died({ code: null, signal: null, stderr: String(err) })
      return
    }
    this.#child = child
    let stderr = ''
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (d: string) => {
      stderr = (stderr + d).slice(-2000)
    })
    if (child.stdout) {
      const rl = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY })
      rl.on('line', (line) => this.#o.onLine?.(line))
    }
    let spawnError: string | undefined
    child.on('error', (err) => {
      spawnError = err.message
    })
    this.#exited = new Promise<void>((resolve) => {
      child.on('close', (code, signal) => {
        const expected = this.#child !== child
        if (this.#child === child) this.#child = undefined
        resolve()
        if (!expected) this.#died({ code, signal, stderr: spawnError ?? stderr.trim() })
      })
    })
    logger.debug({ command, args, pid: child.pid }, 'helper started')
    this.#healthyTimer = clock.setTimeout(() => {
      this.#healthyTimer = undefined
      if (this.#failures > 0) this.#o.onHealthy?.()
      this.#failures = 0
    }, this.#o.healthyAfterMs ?? 10_000)
  }

  #died(info: { code: number | null; signal: string | null; stderr: string }): void {
    this.#clearTimers()
    if (!this.#wanted) return
    this.#failures++
    const base = this.#o.backoffMs ?? 500
    const delay = Math.min(base * 2 ** (this.#failures - 1), this.#o.maxBackoffMs ?? 30_000)
    this.#o.logger.error(
      { command: this.#o.command, ...info, restartInMs: delay, failures: this.#failures },
      'helper died; restarting',
    )
    this.#o.onDeath?.(info)
    this.#restartTimer = this.#o.clock.setTimeout(() => {
      this.#restartTimer = undefined
      if (this.#wanted && !this.#child) this.#spawn()
    }, delay)
  }

  async #kill(): Promise<void> {
    const child = this.#child
    if (!child) return
    this.#child = undefined // from here on its exit is expected
    if (this.#healthyTimer) this.#o.clock.clearTimeout(this.#healthyTimer)
    this.#healthyTimer = undefined
    const exited = this.#exited
    child.kill('SIGTERM')
    // Real timers on purpose: a stuck child must die even when the app runs on a virtual clock.
    const force = setTimeout(() => child.kill('SIGKILL'), 1000)
    await exited
    clearTimeout(force)
  }

  #clearTimers(): void {
    if (this.#restartTimer) this.#o.clock.clearTimeout(this.#restartTimer)
    if (this.#healthyTimer) this.#o.clock.clearTimeout(this.#healthyTimer)
    this.#restartTimer = undefined
    this.#healthyTimer = undefined
  }
}
