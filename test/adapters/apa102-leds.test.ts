import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { apa102Frame } from '../../src/adapters/apa102/apa102-frame.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { resolvePanel } from '../../src/app/config/load.js'
import { panelSchema } from '../../src/app/config/schema.js'
import { createPanel } from '../../src/app/panel-factory.js'
import { silentLogger } from '../../src/core/logger.js'
import { LED_COLOURS } from '../../src/panel/led-colours.js'
import { type FakeGpiod, fakeGpiod, waitFor } from '../helpers/fake-gpiod.js'
import { sleep } from '../helpers/wait.js'

describe('APA102 frames', () => {
  it('start frame, then per LED 0b111 + brightness, blue, green, red, then the end frame', () => {
    const amber = { r: 255, g: 110, b: 0 }
    expect([...apa102Frame(3, amber, 8)]).toEqual([
      0x00,
      0x00,
      0x00,
      0x00, // start: 32 zero bits
      0xe8,
      0x00,
      0x6e,
      0xff, // LED 1: 0b111_01000, B, G, R
      0xe8,
      0x00,
      0x6e,
      0xff,
      0xe8,
      0x00,
      0x6e,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff, // end: 32 one bits
    ])
    expect([...apa102Frame(1, { r: 1, g: 2, b: 3 }, 31)]).toEqual([
      0, 0, 0, 0, 0xff, 3, 2, 1, 0xff, 0xff, 0xff, 0xff,
    ])
  })

  it('off is brightness 0 and black on every LED', () => {
    expect([...apa102Frame(3, undefined, 8)]).toEqual([
      0, 0, 0, 0, 0xe0, 0, 0, 0, 0xe0, 0, 0, 0, 0xe0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
    ])
    expect(apa102Frame(2, { r: 0, g: 0, b: 0 }, 31)).toEqual(apa102Frame(2, undefined, 31))
  })

  it('refuses what the format cannot carry, naming it', () => {
    expect(() => apa102Frame(0, undefined, 8)).toThrow(/0 LEDs; 1 to 64/)
    expect(() => apa102Frame(65, undefined, 8)).toThrow(/65 LEDs/)
    expect(() => apa102Frame(3, undefined, 32)).toThrow(/brightness 32; 0 to 31/)
  })
})

/** The stand-in's bytes cut into frames for `count` LEDs, each checked and read back as a colour. */
function frames(bytes: Buffer, count: number) {
  const size = 8 + count * 4
  expect(bytes.length % size, 'whole frames only').toBe(0)
  const out: string[] = []
  for (let o = 0; o < bytes.length; o += size) {
    const f = bytes.subarray(o, o + size)
    expect([...f.subarray(0, 4)]).toEqual([0, 0, 0, 0])
    expect([...f.subarray(size - 4)]).toEqual([0xff, 0xff, 0xff, 0xff])
    const leds = Array.from({ length: count }, (_, i) => f.subarray(4 + i * 4, 8 + i * 4))
    for (const l of leds) expect(l).toEqual(leds[0]) // one colour on all of them
    const [head, b, g, r] = leds[0] as Buffer
    expect((head as number) >> 5).toBe(0b111)
    const brightness = (head as number) & 0x1f
    out.push(brightness === 0 ? 'off' : `${brightness}:${r},${g},${b}`)
  }
  return out
}

describe('the ReSpeaker 2-Mic preset: button on GPIO17, three APA102s on SPI', () => {
  let fake: FakeGpiod | undefined
  afterEach(() => fake?.cleanup())

  it('shows the LED states in colour through a stand-in SPI device, and turns them off on close', async () => {
    fake = fakeGpiod(2)
    const spi = join(mkdtempSync(join(tmpdir(), 'nocturn-spi-')), 'spidev0.1')
    writeFileSync(spi, '') // a plain file in place of /dev/spidev0.1: the frames land in it
    const resolved = resolvePanel(
      panelSchema.parse({
        backend: 'gpiod',
        preset: 'respeaker-2mic',
        rgbLeds: { device: spi, brightness: 5 },
      }),
    )
    expect(resolved.button).toBe('GPIO17')
    expect(resolved.rgbLeds).toMatchObject({ device: spi, count: 3, brightness: 5 })
    const panel = await createPanel(resolved, {
      clock: realClock(),
      logger: silentLogger,
      env: fake.env,
    })
    await panel.start(() => {})
    const colour = (s: keyof typeof LED_COLOURS) => {
      const c = LED_COLOURS[s]
      return `5:${c.r},${c.g},${c.b}`
    }
    panel.setLed('listening')
    await waitFor(() => frames(readFileSync(spi), 3).includes(colour('listening')), 5000, 'blue')
    panel.setLed('waiting_for_approval')
    // The double blink: amber, dark, amber again.
    await waitFor(
      () => {
        const f = frames(readFileSync(spi), 3)
        const first = f.indexOf(colour('waiting_for_approval'))
        return first >= 0 && f.indexOf(colour('waiting_for_approval'), f.indexOf('off', first)) > 0
      },
      10_000,
      'amber double blink',
    )
    panel.setLed('muted')
    await waitFor(() => frames(readFileSync(spi), 3).includes(colour('muted')), 5000, 'red')
    await sleep(50)
    await panel.close()
    const shown = frames(readFileSync(spi), 3)
    // Dark when opened, then the states in the order set, dark at the end.
    expect(shown[0]).toBe('off')
    const at = (s: keyof typeof LED_COLOURS) => shown.indexOf(colour(s))
    expect(at('listening')).toBeLessThan(at('waiting_for_approval'))
    expect(at('waiting_for_approval')).toBeLessThan(at('muted'))
    expect(shown.at(-1)).toBe('off')
  }, 30_000)

  it('a missing SPI device leaves the button working and says how to enable SPI', async () => {
    fake = fakeGpiod(2)
    const lines: Record<string, unknown>[] = []
    const logger = silentLogger.child({})
    const spy = {
      ...logger,
      child: () => ({ ...logger, error: (o: Record<string, unknown>) => lines.push(o) }),
    } as unknown as typeof silentLogger
    const panel = await createPanel(
      resolvePanel(
        panelSchema.parse({
          backend: 'gpiod',
          preset: 'respeaker-2mic',
          rgbLeds: { device: '/nonexistent/spidev0.1' },
        }),
      ),
      { clock: realClock(), logger: spy, env: fake.env },
    )
    await panel.start(() => {})
    panel.setLed('listening')
    await panel.close()
    expect(String(lines[0]?.err)).toMatch(/dtparam=spi=on/)
  })
})
