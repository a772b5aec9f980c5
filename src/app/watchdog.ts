import { Worker } from 'node:worker_threads'
import { errorText } from '../core/errors.js'

export interface WatchdogOptions {
  /** The event loop must tick at least this often (ms). */
  readonly loopLimitMs?: number
  /** Named feeds and how long each may go unfed (ms), e.g. { microphone: 10_000 }. */
  readonly feeds?: Readonly<Record<string, number>>
  /** How often the main thread proves it is alive, and the worker looks (ms). */
  readonly intervalMs?: number
  /** What to do when a limit is passed; default: write a line to stderr and SIGKILL this process. */
  readonly action?: 'kill' | 'report'
  /** Called (on the main thread, if it is alive) when the worker reports a stall in `report` mode. */
  readonly onStall?: (what: string, silentMs: number) => void
}

/**
 * A watchdog in a worker thread, because Node cannot send sd_notify's WATCHDOG=1 without a native
 * helper (systemd/README.md): the main thread stamps a shared clock every `intervalMs`, and
 * `feed(name)` stamps a named feed (the microphone delivering frames). If the event loop stalls or a
 * feed goes quiet past its limit, the worker — which keeps running while the main thread is stuck —
 * writes one line to stderr and kills the process, and `Restart=on-failure` brings it back.
 * SIGKILL, because a stuck loop would never run a SIGTERM handler.
 */
export class Watchdog {
  readonly #worker: Worker
  readonly #stamps: Float64Array
  readonly #names: string[]
  readonly #timer: NodeJS.Timeout

  constructor(opts: WatchdogOptions = {}) {
    const interval = opts.intervalMs ?? 1000
    this.#names = Object.keys(opts.feeds ?? {})
    const limits = [opts.loopLimitMs ?? 15_000, ...this.#names.map((n) => opts.feeds?.[n] ?? 0)]
    this.#stamps = new Float64Array(new SharedArrayBuffer(8 * limits.length))
    const now = Date.now()
    this.#stamps.fill(now)
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // Not the parent's flags (--import tsx, --input-type=module): the source is plain CommonJS.
      execArgv: [],
      workerData: {
        stamps: this.#stamps,
        limits,
        names: ['event loop', ...this.#names],
        interval,
        action: opts.action ?? 'kill',
      },
    })
    this.#worker.on('error', (err) => {
      // A watchdog that failed must not take the appliance down with it; say so and carry on.
      process.stderr.write(
        `${JSON.stringify({ level: 50, app: 'nocturn', event: 'watchdog_failed', msg: 'watchdog failed', err: errorText(err) })}\n`,
      )
    })
    this.#worker.on('message', (m: { what: string; silentMs: number }) =>
      opts.onStall?.(m.what, m.silentMs),
    )
    // Last: adding a 'message' listener refs the worker again, and a watchdog must never be what
    // keeps a process alive (a failed start has to exit, not hang with only its watchdog running).
    this.#worker.unref()
    this.#timer = setInterval(() => {
      this.#stamps[0] = Date.now()
    }, interval)
    this.#timer.unref()
  }

  /** Proves that `name` (one of the configured feeds) is still delivering. */
  feed(name: string): void {
    const i = this.#names.indexOf(name)
    if (i >= 0) this.#stamps[i + 1] = Date.now()
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.#worker.terminate()
  }
}

// Plain JS, evaluated in the worker: no TypeScript loader needed there.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads')
const { writeSync } = require('node:fs')
const { stamps, limits, names, interval, action } = workerData
const reported = new Set()
setInterval(() => {
  const now = Date.now()
  for (let i = 0; i < limits.length; i++) {
    const silent = now - stamps[i]
    if (limits[i] > 0 && silent > limits[i]) {
      const line = JSON.stringify({ level: 60, time: now, app: 'nocturn', event: 'watchdog_stalled', watchdog: names[i], silentMs: silent, msg: 'watchdog: ' + names[i] + ' stalled' })
      if (action === 'kill') {
        writeSync(2, line + '\\n')
        process.kill(process.pid, 'SIGKILL')
      } else if (!reported.has(i)) {
        reported.add(i)
        parentPort.postMessage({ what: names[i], silentMs: silent })
      }
    } else reported.delete(i)
  }
}, interval)
`
