import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Rgb, RgbLeds } from '../../ports/rgb-leds.js'
import { apa102Frame } from './apa102-frame.js'
import { openSpiBus, type SpiBus } from './spi-bus.js'

export interface Apa102Options {
  /** `/dev/spidev0.1` on the ReSpeaker 2-Mic HAT. */
  readonly device: string
  readonly count: number
  /** Global brightness, 0–31 (the APA102's 5-bit field). */
  readonly brightness: number
  readonly speedHz: number
  readonly logger: Logger
}

/**
 * APA102 colour LEDs on SPI, all in one colour. Frames go out one at a time; while one is being
 * written only the newest waiting colour is kept, so a burst of changes costs one transfer. A
 * failed write is logged once and the next colour tried again; the lights never stop the speaker.
 */
export class Apa102Leds implements RgbLeds {
  readonly #options: Apa102Options
  readonly #bus: SpiBus
  #pending: Buffer | undefined
  #writing: Promise<void> | undefined
  #failed = false

  private constructor(options: Apa102Options, bus: SpiBus) {
    this.#options = options
    this.#bus = bus
  }

  static async open(options: Apa102Options): Promise<Apa102Leds> {
    // Validates count and brightness before the device is touched.
    apa102Frame(options.count, undefined, options.brightness)
    const leds = new Apa102Leds(
      options,
      await openSpiBus({ device: options.device, speedHz: options.speedHz }),
    )
    leds.show(undefined)
    return leds
  }

  show(colour: Rgb | undefined): void {
    this.#pending = apa102Frame(this.#options.count, colour, this.#options.brightness)
    this.#writing ??= this.#drain()
  }

  showEach(colours: readonly (Rgb | undefined)[]): void {
    this.#pending = apa102Frame(this.#options.count, colours, this.#options.brightness)
    this.#writing ??= this.#drain()
  }

  async close(): Promise<void> {
    this.show(undefined)
    await this.#writing
    await this.#bus.close()
  }

  async #drain(): Promise<void> {
    while (this.#pending) {
      const frame = this.#pending
      this.#pending = undefined
      try {
        await this.#bus.write(frame)
        this.#failed = false
      } catch (err) {
        if (!this.#failed) {
          this.#options.logger.error(
            { event: 'apa102_write_failed', device: this.#options.device, err: errorText(err) },
            'APA102 LEDs: write failed',
          )
        }
        this.#failed = true
      }
    }
    this.#writing = undefined
  }
}
