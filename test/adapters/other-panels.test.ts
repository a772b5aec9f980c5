import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { sysfsNumber } from '../../src/adapters/rpi-gpio/sysfs.js'
import { SysfsPanel } from '../../src/adapters/rpi-gpio/sysfs-panel.js'
import { TerminalPanel } from '../../src/adapters/terminal-panel/terminal-panel.js'
import { silentLogger } from '../../src/core/logger.js'
import { PanelController, type PanelEvent } from '../../src/panel/panel-controller.js'
import type { ButtonEvent } from '../../src/ports/panel.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

/** A fake /sys/class/gpio: one header chip with `base`, and pre-exported lines. */
function fakeSysfs(label: string, base: number, exported: number[] = []): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-sysfs-')), 'gpio')
  mkdirSync(join(dir, `gpiochip${base}`), { recursive: true })
  writeFileSync(join(dir, `gpiochip${base}`, 'label'), `${label}\n`)
  writeFileSync(join(dir, `gpiochip${base}`, 'base'), `${base}\n`)
  mkdirSync(join(dir, 'gpiochip600'))
  writeFileSync(join(dir, 'gpiochip600', 'label'), 'raspberrypi-exp-gpio\n')
  writeFileSync(join(dir, 'gpiochip600', 'base'), '600\n')
  writeFileSync(join(dir, 'export'), '')
  writeFileSync(join(dir, 'unexport'), '')
  for (const n of exported) {
    mkdirSync(join(dir, `gpio${n}`))
    writeFileSync(join(dir, `gpio${n}`, 'value'), '1\n')
    writeFileSync(join(dir, `gpio${n}`, 'direction'), 'in\n')
  }
  return dir
}

describe('sysfs numbering (why rpi-gpio fails with EINVAL on 6.6+)', () => {
  it('reads the header chip base: 0 before 6.6, 512 on a Pi 4 with 6.6+, 571 on a Pi 5', () => {
    expect(sysfsNumber(fakeSysfs('pinctrl-bcm2711', 0), 'GPIO17')).toBe(17)
    expect(sysfsNumber(fakeSysfs('pinctrl-bcm2711', 512), 'GPIO17')).toBe(529)
    expect(sysfsNumber(fakeSysfs('pinctrl-rp1', 571), 'GPIO17')).toBe(588)
    expect(() => sysfsNumber('/nonexistent/gpio', 'GPIO17')).toThrow(
      /no sysfs GPIO; use panel.backend "gpiod"/,
    )
  })
})

describe('the sysfs panel on a fake tree', () => {
  it('sets directions, debounces the polled button and drives the LED value', async () => {
    const sys = fakeSysfs('pinctrl-bcm2711', 512, [529, 537])
    const clock = new VirtualClock()
    const events: ButtonEvent[] = []
    const panel = new SysfsPanel({
      button: 'GPIO17',
      led: 'GPIO25',
      clock,
      logger: silentLogger,
      sysGpio: sys,
    })
    await panel.start((e) => events.push(e))
    expect(readFileSync(join(sys, 'gpio529', 'direction'), 'utf8')).toBe('in')
    expect(readFileSync(join(sys, 'gpio537', 'direction'), 'utf8')).toBe('low')
    const value = (v: string) => writeFileSync(join(sys, 'gpio529', 'value'), v)
    await clock.advance(50)
    value('0') // pressed (active low) …
    await clock.advance(10)
    value('1') // … bounce …
    await clock.advance(10)
    value('0') // … and down
    await clock.advance(300)
    value('1')
    await clock.advance(100)
    expect(events.map((e) => e.kind)).toEqual(['press', 'release'])
    panel.setLed('listening')
    expect(readFileSync(join(sys, 'gpio537', 'value'), 'utf8')).toBe('1')
    panel.setLed('idle')
    expect(readFileSync(join(sys, 'gpio537', 'value'), 'utf8')).toBe('0')
    await panel.close()
    expect(clock.pending).toBe(0)
  })
})

describe('the terminal panel', () => {
  /** The terminal panel behind a controller on the virtual clock; `lines()` is what it drew. */
  async function terminal(o: { keys?: string; talk?: 'hold' } = {}) {
    const clock = new VirtualClock()
    const input = new PassThrough()
    const output = new PassThrough()
    let drawn = ''
    output.on('data', (d) => {
      drawn += String(d)
    })
    const panel = new TerminalPanel({
      input,
      output,
      clock,
      holdMs: 1200,
      ...(o.keys && { keys: o.keys }),
    })
    const ctl = new PanelController({
      panel,
      clock,
      logger: silentLogger,
      ...(o.talk && { talk: o.talk }),
    })
    const events: PanelEvent[] = []
    ctl.on((e) => events.push(e))
    await ctl.start()
    return { clock, input, ctl, events, lines: () => drawn.split('\n').filter(Boolean) }
  }

  it('m mutes, s is a long press that stops speaking, the LED is a status line', async () => {
    const { clock, input, ctl, events, lines } = await terminal()
    ctl.setActivity('speaking')
    input.write('s')
    await clock.advance(1500)
    input.write('m')
    await clock.advance(10)
    expect(events.map((e) => e.kind)).toEqual(['stop_speaking', 'mute'])
    expect(lines()).toEqual([
      '[nocturn] ○ idle   (m: mute, s: stop talking)',
      '[nocturn] ◉ speaking   (m: mute, s: stop talking)',
      '[nocturn] ⊘ muted   (m: mute, s: stop talking)',
    ])
    await ctl.close()
  })

  it('in wake mode s while nothing plays talks, and the status line says so', async () => {
    const keys = 'm: mute, s: stop talking, or talk'
    const { clock, input, ctl, events, lines } = await terminal({ keys, talk: 'hold' })
    input.write('s')
    await clock.advance(1500)
    expect(events.map((e) => e.kind)).toEqual(['talk'])
    // The cue while held (letting go now talks), then the state again: no session here.
    expect(lines()).toEqual([
      `[nocturn] ○ idle   (${keys})`,
      `[nocturn] ● listening   (${keys})`,
      `[nocturn] ○ idle   (${keys})`,
    ])
    await ctl.close()
  })
})
