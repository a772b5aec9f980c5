import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { ToolSet } from '../core/tool-set.js'
import type { Clock, TimerHandle } from '../ports/clock.js'
import type { Home, HomeSnapshot } from '../ports/home.js'
import { ServerFault } from '../ports/tool-server.js'
import type { CriticalPolicy } from './criticality.js'
import { fitsModelName } from './fit-schema.js'
import { homeTool } from './home-tool.js'

/** The source name the home's tools carry in the ToolSet. */
const HOME_SOURCE = 'home-assistant'

export interface HomeToolsOptions {
  readonly home: Home
  readonly tools: ToolSet
  readonly policy: CriticalPolicy
  readonly area?: string | undefined
  readonly clock: Clock
  readonly logger: Logger
  /** How often the list is read again while the home answers (HA sends no list-changed notice). */
  readonly refreshMs: number
  /** How soon it is tried again while the home does not answer: it is back within this. */
  readonly retryMs: number
  readonly confirmMs: number
}

export interface RefreshResult {
  readonly ok: boolean
  readonly tools: number
  /** Names refused because a built-in tool already has them. */
  readonly refused: readonly string[]
  /** Why it failed, as a fault kind (`unreachable`, `unauthorized`…). */
  readonly fault?: string
}

/**
 * The home's tools in the ToolSet, kept fresh: listed with the home's exposed entities at start,
 * again on a timer, and soon after the home comes back. A failed refresh keeps the last list (the
 * tools then say the home is unreachable when called); a session keeps what it opened with.
 */
export class HomeTools {
  readonly #o: HomeToolsOptions
  #snapshot: HomeSnapshot | undefined
  #timer: TimerHandle | undefined
  #closed = false
  #last: RefreshResult | undefined

  constructor(options: HomeToolsOptions) {
    this.#o = options
  }

  get last(): RefreshResult | undefined {
    return this.#last
  }

  get snapshot(): HomeSnapshot | undefined {
    return this.#snapshot
  }

  /** Reads the list and the entities now; never throws. */
  async refresh(): Promise<RefreshResult> {
    const { home, tools, logger: log } = this.#o
    try {
      // Both settle before the next refresh may start: no request of this one is left running.
      const [listing, reading] = await Promise.allSettled([home.listTools(), home.snapshot()])
      if (listing.status === 'rejected') throw listing.reason
      if (reading.status === 'rejected') throw reading.reason
      const listed = listing.value
      const snapshot = reading.value
      this.#snapshot = snapshot
      // A name a model cannot take would fail every session's setup: left out, said once.
      const unfit = listed.filter((t) => !fitsModelName(t.name)).map((t) => t.name.slice(0, 80))
      if (unfit.length > 0) {
        log.warn(
          { event: 'home_tool_name_unfit', tools: unfit },
          'home tools left out: names a model does not accept (letters, digits, _ . : -, at most 64)',
        )
      }
      const made = listed
        .filter((t) => fitsModelName(t.name))
        .map((info) =>
          homeTool(info, {
            home,
            snapshot: () => this.#snapshot,
            refresh: (signal) => this.#read(signal),
            policy: this.#o.policy,
            area: this.#o.area,
            confirmMs: this.#o.confirmMs,
            logger: log,
          }),
        )
      const refused = tools.replaceSource(HOME_SOURCE, made)
      if (refused.length > 0) {
        log.warn(
          { event: 'home_tool_name_taken', tools: refused },
          'home tools refused: a built-in tool has the same name',
        )
      }
      const wasDown = this.#last !== undefined && !this.#last.ok
      this.#last = { ok: true, tools: made.length - refused.length, refused }
      log.info(
        { tools: this.#last.tools, entities: snapshot.entities.length, back: wasDown },
        'home tools listed',
      )
      return this.#last
    } catch (err) {
      const fault = err instanceof ServerFault ? err.kind : 'bad_answer'
      // Logged once per outage (and again when the fault changes), not on every retry.
      if (this.#last?.ok !== false || this.#last.fault !== fault) {
        log.warn({ event: `home_list_${fault}`, err: errorText(err) }, 'home tools not listed')
      }
      this.#last = { ok: false, tools: 0, refused: [], fault }
      return this.#last
    }
  }

  /** Refreshes now, then on the timer, until closed. */
  async start(): Promise<RefreshResult> {
    const first = await this.refresh()
    this.#schedule()
    return first
  }

  close(): void {
    this.#closed = true
    if (this.#timer) this.#o.clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #schedule(): void {
    if (this.#closed) return
    const ms = this.#last?.ok ? this.#o.refreshMs : this.#o.retryMs
    this.#timer = this.#o.clock.setTimeout(() => {
      void this.refresh().then(() => this.#schedule())
    }, ms)
  }

  async #read(signal?: AbortSignal): Promise<HomeSnapshot> {
    const snapshot = await this.#o.home.snapshot(signal)
    this.#snapshot = snapshot
    return snapshot
  }
}
