import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'

interface AttemptOptions {
  readonly clock: Clock
  readonly log: Logger
  /** How the log names the connection (`live`, `realtime`). */
  readonly label: string
  readonly timeoutMs: number
  /** The half-open connection, ended silently when the attempt fails. */
  readonly conn: { abort(): void }
}

/**
 * One `open()` of a live connection: it settles once — by the setup completing, by a failure
 * (logged, the connection aborted), or by the connect deadline, which the provider's SDK does not
 * keep by itself. The same for every provider; what counts as set up or failed is the adapter's.
 */
export class OpenAttempt<T> {
  readonly promise: Promise<T>
  #settled = false
  #resolve: (value: T) => void = () => {}
  #reject: (err: Error) => void = () => {}
  readonly #timer
  readonly #o: AttemptOptions

  /** `timeoutMessage`: what the connect deadline's error says (what did not happen, and why). */
  constructor(o: AttemptOptions, timeoutMessage: string) {
    this.#o = o
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
    this.#timer = o.clock.setTimeout(
      () => this.fail(new NocturnError('NOC_ERR_LIVE_CONNECT_TIMEOUT', timeoutMessage)),
      o.timeoutMs,
    )
  }

  get settled(): boolean {
    return this.#settled
  }

  fail(err: Error): void {
    if (this.#settled) return
    this.#settled = true
    this.#o.clock.clearTimeout(this.#timer)
    this.#o.conn.abort()
    this.#o.log.warn(
      { event: 'live_connect_failed', err: errorText(err), code: (err as NocturnError).code },
      `${this.#o.label} connect failed`,
    )
    this.#reject(err)
  }

  /** The setup completed: false when the attempt had already ended (too late). */
  succeed(value: T): boolean {
    if (this.#settled) return false
    this.#settled = true
    this.#o.clock.clearTimeout(this.#timer)
    this.#o.log.info({}, `${this.#o.label} connected`)
    this.#resolve(value)
    return true
  }
}
