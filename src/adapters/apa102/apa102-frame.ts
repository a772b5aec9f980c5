import type { Rgb } from '../../ports/rgb-leds.js'

/** The most LEDs one frame drives: the 32-bit end frame clocks data through 64 of them. */
const MAX_LEDS = 64

/**
 * One APA102 frame for `count` LEDs in one colour (or each in its own, from a list): a start frame of 32 zero bits; per LED one byte
 * `0b111` + 5-bit global brightness, then blue, green, red; an end frame of 32 one bits (each LED
 * delays the data by half a clock, so 32 extra clocks carry it through 64 LEDs). Off is brightness
 * 0 and black.
 */
export function apa102Frame(
  count: number,
  colour: Rgb | undefined | readonly (Rgb | undefined)[],
  brightness: number,
): Buffer {
  if (!Number.isInteger(count) || count < 1 || count > MAX_LEDS) {
    throw new RangeError(`APA102: ${count} LEDs; 1 to ${MAX_LEDS} supported`)
  }
  if (!Number.isInteger(brightness) || brightness < 0 || brightness > 31) {
    throw new RangeError(`APA102: brightness ${brightness}; 0 to 31`)
  }
  const frame = Buffer.alloc(4 + count * 4 + 4)
  for (let i = 0; i < count; i++) {
    const c = Array.isArray(colour)
      ? (colour as readonly (Rgb | undefined)[])[i]
      : (colour as Rgb | undefined)
    const lit = c && (c.r | c.g | c.b) !== 0 ? brightness : 0
    const o = 4 + i * 4
    frame[o] = 0b1110_0000 | lit
    frame[o + 1] = lit ? byte(c?.b) : 0
    frame[o + 2] = lit ? byte(c?.g) : 0
    frame[o + 3] = lit ? byte(c?.r) : 0
  }
  frame.fill(0xff, 4 + count * 4)
  return frame
}

function byte(v: number | undefined): number {
  return Math.max(0, Math.min(255, Math.round(v ?? 0)))
}
