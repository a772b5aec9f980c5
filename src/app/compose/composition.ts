import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type { Config } from '../config/schema.js'

type CloseStep = () => Promise<void> | void

/**
 * What start-up opened, closed in the reverse order: a part opened later may use an earlier one
 * while it closes (the endpoint the broker connection, the driver the speaker). A failing step is
 * logged and the rest still run. Closing twice closes once; the second caller waits for the first.
 */
export class Closers {
  readonly #steps: CloseStep[] = []
  readonly #log: Logger
  #closing: Promise<void> | undefined

  constructor(log: Logger) {
    this.#log = log
  }

  add(step: CloseStep): void {
    this.#steps.push(step)
  }

  close(): Promise<void> {
    this.#closing ??= this.#run()
    return this.#closing
  }

  async #run(): Promise<void> {
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step()
      } catch (err) {
        this.#log.warn({ event: 'close_step_failed', err: errorText(err) }, 'close step failed')
      }
    }
  }
}

/** What every composition module is handed: the config, the clock, the log, and the closers. */
export interface Composition {
  readonly config: Config
  readonly clock: Clock
  readonly log: Logger
  readonly closers: Closers
}
