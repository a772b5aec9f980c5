import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import { Debouncer } from '../../panel/debouncer.js'
import { LedBlinker } from '../../panel/led-blinker.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'
import type { ButtonEvent, LedState, Panel } from '../../ports/panel.js'
import { sysfsNumber } from './sysfs.js'

export interface SysfsPanelOptions {
  readonly button?: string
  readonly buttonActiveLow?: boolean
  readonly led?: string
  readonly ledActiveLow?: boolean
  readonly debounceMs?: number
  readonly clock: Clock
  readonly logger: Logger
  /** /sys/class/gpio, or a fake tree in tests. */
  readonly sysGpio?: string
  /** How often the button's value is read. */
  readonly pollMs?: number
}

/**
 * The `rpi-gpio` backend: the legacy sysfs GPIO interface for kernels before 6.6 (and any later
 * kernel that still has it). It does what the rpi-gpio package does — export, direction, value —
 * without its native `epoll` addon and without its raw numbers, which fail with EINVAL on 6.6+
 * (the chip base is read instead). Edges are found by polling `value` (Node cannot poll(2) a sysfs
 * file for POLLPRI) and debounced in software. The button's bias cannot be set through sysfs: the
 * board's own pull-up (both HATs have one) is relied on.
 */
export class SysfsPanel implements Panel {
  readonly #options: SysfsPanelOptions
  readonly #root: string
  #exported: number[] = []
  #poll: TimerHandle | undefined
  #debouncer: Debouncer | undefined
  #blinker: LedBlinker | undefined
  #ledValue: string | undefined

  constructor(opts: SysfsPanelOptions) {
    this.#options = opts
    this.#root = opts.sysGpio ?? '/sys/class/gpio'
  }

  async start(onButton: (event: ButtonEvent) => void): Promise<void> {
    const { clock } = this.#options
    if (this.#options.button) {
      const n = this.#export(this.#options.button, 'in')
      const activeLow = this.#options.buttonActiveLow ?? true
      const valueFile = join(this.#root, `gpio${n}`, 'value')
      this.#debouncer = new Debouncer(clock, this.#options.debounceMs ?? 30, (pressed, atMs) =>
        onButton({ kind: pressed ? 'press' : 'release', atMs }),
      )
      let last: boolean | undefined
      const tick = () => {
        try {
          const high = readFileSync(valueFile, 'utf8').trim() === '1'
          const pressed = high !== activeLow
          if (pressed !== last) {
            last = pressed
            this.#debouncer?.input(pressed)
          }
        } catch (err) {
          this.#options.logger.error(
            { event: 'read_button_failed', err: errorText(err), file: valueFile },
            'cannot read the button',
          )
        }
        this.#poll = clock.setTimeout(tick, this.#options.pollMs ?? 10)
      }
      tick()
    }
    if (this.#options.led) {
      const n = this.#export(this.#options.led, 'out')
      this.#ledValue = join(this.#root, `gpio${n}`, 'value')
      const activeLow = this.#options.ledActiveLow ?? false
      this.#blinker = new LedBlinker(clock, (on) => {
        if (this.#ledValue) writeFileSync(this.#ledValue, on !== activeLow ? '1' : '0')
      })
      this.#blinker.show('idle')
    }
  }

  setLed(state: LedState): void {
    this.#blinker?.show(state)
  }

  async close(): Promise<void> {
    if (this.#poll) this.#options.clock.clearTimeout(this.#poll)
    this.#poll = undefined
    this.#debouncer?.dispose()
    this.#blinker?.stop()
    for (const n of this.#exported) {
      try {
        writeFileSync(join(this.#root, 'unexport'), String(n))
      } catch {
        // Already gone: nothing to release.
      }
    }
    this.#exported = []
  }

  #export(line: string, direction: 'in' | 'out'): number {
    const n = sysfsNumber(this.#root, line)
    const dir = join(this.#root, `gpio${n}`)
    if (!existsSync(dir)) {
      try {
        writeFileSync(join(this.#root, 'export'), String(n))
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code
        throw new Error(
          `cannot export ${line} (sysfs ${n}) through ${this.#root}/export: ${code}` +
            (code === 'EINVAL' ? ' — this kernel refuses it; use panel.backend "gpiod"' : '') +
            (code === 'EACCES' ? ' — add the nocturn user to the gpio group' : ''),
        )
      }
      this.#exported.push(n)
    }
    writeFileSync(join(dir, 'direction'), direction === 'out' ? 'low' : 'in')
    return n
  }
}
