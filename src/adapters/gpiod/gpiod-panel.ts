import { Backoff, type BackoffPolicy } from '../../core/backoff.js'
import type { Logger } from '../../core/logger.js'
import { Debouncer } from '../../panel/debouncer.js'
import { LedBlinker } from '../../panel/led-blinker.js'
import { LED_PATTERNS } from '../../panel/led-patterns.js'
import type { Clock } from '../../ports/clock.js'
import type { ButtonEvent, LedState, Panel } from '../../ports/panel.js'
import { type ChildExit, SupervisedChild } from '../child-process/supervised-child.js'
import {
  type Bias,
  gpiomonArgs,
  gpiosetArgs,
  gpiosetPatternArgs,
  type LineRef,
  parseEdge,
  parseGpiofind,
} from './command-lines.js'
import { detectGpiodVersion, type GpiodMajor, runCommand } from './version.js'

export interface GpiodPanelOptions {
  /** Button line by name, e.g. `GPIO17`; absent for a board without a button. */
  readonly button?: string
  readonly buttonActiveLow?: boolean
  /** Bias for the button line; defaults to a pull-up for an active-low button. */
  readonly buttonBias?: Bias
  readonly led?: string
  readonly ledActiveLow?: boolean
  readonly debounceMs?: number
  readonly clock: Clock
  readonly logger: Logger
  /** The environment the tools run in (tests put stand-ins first on PATH). */
  readonly env?: NodeJS.ProcessEnv
  /** Skip detection (tests, or a doctor that already knows). */
  readonly version?: GpiodMajor
  /** First restart delay of a dead helper; doubles per death in a row up to `maxBackoffMs`. */
  readonly backoffMs?: number
  readonly maxBackoffMs?: number
  /** Told when a helper dies or recovers, so the app can surface it. */
  readonly onFault?: (fault: { part: 'button' | 'led'; healthy: boolean; detail: string }) => void
}

const DEFAULT_DEBOUNCE_MS = 30

/**
 * A dead helper: 0.5 s, doubling to 30 s (a GPIO tool that keeps dying is a wiring or permission
 * fault, not a race); one that then held its line 10 s is healthy, and its fault is cleared.
 */
const HELPER_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000, healthyMs: 10_000 }

/**
 * The panel on libgpiod's command-line tools (docs/design.md §6): a long-lived `gpiomon`
 * for the button and a `gpioset` holding the LED, lines addressed by name so the Pi 4 / Pi 5 chip
 * renumbering does not matter. Both the 1.x (Bookworm) and 2.x (Trixie) command lines are spoken;
 * the version is asked of `gpiomon --version`. A helper that dies puts the LED in `error` (mute
 * still wins) and is restarted with backoff.
 */
export class GpiodPanel implements Panel {
  readonly #options: GpiodPanelOptions
  #version: GpiodMajor | undefined
  #monitor: SupervisedChild | undefined
  #setter: SupervisedChild | undefined
  #debouncer: Debouncer | undefined
  #blinker: LedBlinker | undefined
  #ledArgs: string[] = []
  #ledPattern: ((state: LedState) => string[] | undefined) | undefined
  #shown: LedState | undefined
  #requested: LedState = 'idle'
  readonly #faults = new Set<'button' | 'led'>()
  #started = false
  #dirty = false
  #pushing: Promise<void> | undefined
  #setterStarted = false

  constructor(opts: GpiodPanelOptions) {
    this.#options = opts
  }

  get version(): GpiodMajor | undefined {
    return this.#version
  }

  async start(onButton: (event: ButtonEvent) => void): Promise<void> {
    try {
      await this.#start(onButton)
    } catch (err) {
      // Half started (the button's gpiomon running, the LED line not found): leave nothing behind.
      await this.close()
      throw err
    }
  }

  async #start(onButton: (event: ButtonEvent) => void): Promise<void> {
    const { clock, logger } = this.#options
    const version = this.#options.version ?? (await detectGpiodVersion(this.#options.env))
    this.#version = version
    logger.info({ panel: 'gpiod', libgpiod: version }, 'panel starting')
    const policy: BackoffPolicy = {
      ...HELPER_BACKOFF,
      initialMs: this.#options.backoffMs ?? HELPER_BACKOFF.initialMs,
      maxMs: this.#options.maxBackoffMs ?? HELPER_BACKOFF.maxMs,
    }
    const common = {
      env: this.#options.env,
      clock,
      logger,
      describeExit: helperExit,
    }

    if (this.#options.button) {
      const line = await this.#resolve(this.#options.button, version)
      const activeLow = this.#options.buttonActiveLow ?? true
      const debounceMs = this.#options.debounceMs ?? DEFAULT_DEBOUNCE_MS
      // Software debounce in every version: 1.x has none, and it costs nothing on top of 2.x's.
      this.#debouncer = new Debouncer(clock, debounceMs, (pressed, atMs) =>
        onButton({ kind: pressed ? 'press' : 'release', atMs }),
      )
      const bias = this.#options.buttonBias ?? (activeLow ? 'pull-up' : 'pull-down')
      this.#monitor = new SupervisedChild({
        ...common,
        command: 'gpiomon',
        args: () => gpiomonArgs(line, { bias, debounceMs }),
        backoff: new Backoff(policy),
        onLine: (text) => {
          const event = parseEdge(version, text)
          if (!event) return
          const pressed = activeLow ? event.edge === 'falling' : event.edge === 'rising'
          this.#debouncer?.input(pressed, edgeTime(clock, event.stampSec))
        },
        onFailure: (error) => this.#fault('button', false, error.message),
        onHealthy: () => this.#fault('button', true, 'gpiomon running again'),
      })
      this.#monitor.start()
    }

    if (this.#options.led) {
      const line = await this.#resolve(this.#options.led, version)
      const activeLow = this.#options.ledActiveLow ?? false
      this.#setter = new SupervisedChild({
        ...common,
        command: 'gpioset',
        args: () => this.#ledArgs,
        backoff: new Backoff(policy),
        onFailure: (error) => this.#fault('led', false, error.message),
        onHealthy: () => this.#fault('led', true, 'gpioset running again'),
      })
      if (version === 2) {
        // 2.x blinks by itself (--toggle): one gpioset per LED state, not one per level.
        this.#ledPattern = (state) => gpiosetPatternArgs(line, LED_PATTERNS[state], activeLow)
      }
      this.#blinker = new LedBlinker(clock, (on) => {
        this.#ledArgs = gpiosetArgs(line, on !== activeLow ? 1 : 0)
        this.#pushLevel()
      })
    }
    this.#started = true
    this.#render()
    // The button is watched from here: the moment a start is measured by (bench/wake-startup).
    logger.info({ panel: 'gpiod' }, 'panel started')
  }

  setLed(state: LedState): void {
    this.#requested = state
    if (this.#started) this.#render()
  }

  async close(): Promise<void> {
    this.#started = false
    this.#debouncer?.dispose()
    this.#blinker?.stop()
    await this.#pushing
    await Promise.all([this.#monitor?.stop(), this.#setter?.stop()])
  }

  /**
   * Neither version changes a held value in place without extra build options (2.x `--interactive`
   * needs libedit), so a new level is a new gpioset. One at a time: the old one must have released
   * the line before the next requests it, and levels that changed meanwhile collapse into the last.
   */
  #pushLevel(): void {
    this.#dirty = true
    if (this.#pushing || !this.#started) return
    this.#pushing = (async () => {
      while (this.#dirty && this.#started && this.#setter) {
        this.#dirty = false
        if (this.#setterStarted) await this.#setter.restart()
        else {
          this.#setterStarted = true
          this.#setter.start()
        }
      }
    })().finally(() => {
      this.#pushing = undefined
      // A change that arrived after the loop's last look but before this point is not lost.
      if (this.#dirty && this.#started) this.#pushLevel()
    })
  }

  #render(): void {
    const state = this.#requested !== 'muted' && this.#faults.size > 0 ? 'error' : this.#requested
    const patternArgs = this.#ledPattern?.(state)
    if (patternArgs) {
      if (state === this.#shown) return
      this.#shown = state
      this.#ledArgs = patternArgs
      this.#pushLevel()
      return
    }
    this.#shown = state
    this.#blinker?.show(state)
  }

  #fault(part: 'button' | 'led', healthy: boolean, detail: string): void {
    if (healthy) this.#faults.delete(part)
    else this.#faults.add(part)
    this.#options.onFault?.({ part, healthy, detail })
    if (this.#started) this.#render()
  }

  async #resolve(name: string, version: GpiodMajor): Promise<LineRef> {
    if (version === 2) return { version, name }
    // 1.x tools take a chip and an offset; gpiofind maps the name, whatever the chip is numbered.
    const r = await runCommand('gpiofind', [name], this.#options.env)
    const found = r.code === 0 ? parseGpiofind(r.stdout) : undefined
    if (!found) {
      const why = r.spawnError ?? (r.stderr.trim() || 'no such line')
      throw new Error(
        `GPIO line ${name} not found (${why}); check the pin name with "gpioinfo" and the panel pins in the config`,
      )
    }
    return { version, name, chip: found.chip, offset: found.offset }
  }
}

/** What a dead helper said last (its stderr), or how it ended when it said nothing. */
function helperExit(exit: ChildExit, stderr: string): Error {
  if (exit.spawnError) return exit.spawnError
  const said = stderr.trim()
  if (said !== '') return new Error(said)
  return new Error(exit.signal ? `killed by ${exit.signal}` : `exited with code ${exit.code}`)
}

/**
 * When an edge happened, on `clock`: gpiomon stamps each edge with the kernel's CLOCK_MONOTONIC
 * (what process.hrtime reads), so an edge read late keeps its own time. A process the board
 * throttles reads a 1.2 s hold's two edges in one burst; dated on arrival, that hold was a short
 * press and muted the speaker. A stamp from another clock (CLOCK_REALTIME, kernels before 5.7)
 * or from the future reads as arrival time.
 */
function edgeTime(clock: Clock, stampSec: number | undefined): number {
  const now = clock.now()
  if (stampSec === undefined) return now
  const ageMs = Number(process.hrtime.bigint()) / 1e6 - stampSec * 1000
  return ageMs >= 0 && ageMs < 60_000 ? now - ageMs : now
}
