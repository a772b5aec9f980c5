import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { gpiomonArgs, gpiosetArgs, parseEdge } from '../../src/adapters/gpiod/command-lines.js'
import { GpiodPanel, type GpiodPanelOptions } from '../../src/adapters/gpiod/gpiod-panel.js'
import { detectGpiodVersion, runCommand } from '../../src/adapters/gpiod/version.js'
import { silentLogger } from '../../src/core/logger.js'
import type { ButtonEvent } from '../../src/ports/panel.js'
import {
  type FakeGpiod,
  fakeGpiod,
  isGone,
  liveStandIns,
  waitFor,
  zombieChildren,
} from '../helpers/fake-gpiod.js'
import { missingCommands } from '../helpers/system.js'
import { sleep } from '../helpers/wait.js'

/** The command line of every gpioset the stand-ins started, oldest first. */
function gpiosetSpawns(f: FakeGpiod): string[][] {
  return f
    .log()
    .filter((l) => l.tool === 'gpioset' && l.event === 'spawn')
    .map((l) => l.argv)
}

/** The panel with the commands on `env`'s PATH, the real clock and no logs; `pins` adds the rest. */
function gpiodPanel(env: NodeJS.ProcessEnv, pins: Partial<GpiodPanelOptions>): GpiodPanel {
  return new GpiodPanel({ clock: realClock(), logger: silentLogger, env, ...pins })
}

let fake: FakeGpiod | undefined
let panel: GpiodPanel | undefined
afterEach(async () => {
  await panel?.close()
  fake?.cleanup()
  panel = undefined
  fake = undefined
})

// A press with contact bounce (down-up-down within 4 ms), held 300 ms, released with bounce.
const BOUNCY_PRESS = [
  { ms: 100, edge: 'falling' as const },
  { ms: 2, edge: 'rising' as const },
  { ms: 2, edge: 'falling' as const },
  { ms: 300, edge: 'rising' as const },
  { ms: 2, edge: 'falling' as const },
  { ms: 2, edge: 'rising' as const },
]

describe.each([1, 2] as const)('the gpiod panel against libgpiod %i.x stand-ins', (version) => {
  it('collapses a bouncy press into one press and one release', async () => {
    fake = fakeGpiod(version)
    fake.scriptMonitor([BOUNCY_PRESS])
    const events: ButtonEvent[] = []
    panel = gpiodPanel(fake.env, { button: 'GPIO17' })
    await panel.start((e) => events.push(e))
    expect(panel.version).toBe(version)
    await waitFor(() => events.length >= 2, 15_000, 'press and release')
    await sleep(100) // any extra (bounce) event would have arrived by now
    expect(events.map((e) => e.kind)).toEqual(['press', 'release'])
    const held = (events[1]?.atMs ?? 0) - (events[0]?.atMs ?? 0)
    expect(held).toBeGreaterThan(200)
    const mon = fake.log().find((l) => l.tool === 'gpiomon' && l.event === 'start')
    expect(mon?.argv).toEqual(
      version === 1
        ? ['-b', '--bias=pull-up', '--format=%e %s.%n', 'gpiochip0', '17']
        : [
            '--edges',
            'both',
            '--bias',
            'pull-up',
            '--debounce-period',
            '30ms',
            '--format',
            '%E %S',
            'GPIO17',
          ],
    )
  })

  it('a hold whose two edges are read in one burst (a throttled process) is still a hold, dated by gpiomon', async () => {
    fake = fakeGpiod(version)
    // Pressed 1.2 s before the release, but both lines reach the panel together.
    fake.scriptMonitor([
      [
        { ms: 100, edge: 'falling', agoMs: 1200 },
        { ms: 0, edge: 'rising' },
      ],
    ])
    const events: ButtonEvent[] = []
    panel = gpiodPanel(fake.env, { button: 'GPIO17' })
    await panel.start((e) => events.push(e))
    await waitFor(() => events.length >= 2, 15_000, 'press and release')
    expect(events.map((e) => e.kind)).toEqual(['press', 'release'])
    const held = (events[1]?.atMs ?? 0) - (events[0]?.atMs ?? 0)
    // Dated on arrival it was a few ms: a short press, which mutes.
    expect(held).toBeGreaterThan(1100)
    expect(held).toBeLessThan(1300)
  })

  it('holds the LED with one gpioset at a time, a new one per level', async () => {
    fake = fakeGpiod(version)
    panel = gpiodPanel(fake.env, { led: 'GPIO25' })
    await panel.start(() => {})
    const starts = () => fake!.log().filter((l) => l.tool === 'gpioset' && l.event === 'start')
    panel.setLed('listening') // steady on
    await waitFor(() => starts().at(-1)?.argv.at(-1)?.endsWith('=1') === true, 15_000, 'LED on')
    panel.setLed('idle') // off
    await waitFor(() => starts().at(-1)?.argv.at(-1)?.endsWith('=0') === true, 15_000, 'LED off')
    expect(starts().at(-1)?.argv).toEqual(
      version === 1 ? ['--mode=signal', 'gpiochip0', '25=0'] : ['GPIO25=0'],
    )
    // (The very first gpioset, holding the line low at start-up, may be replaced before it has
    // logged anything; the log shows every one that got as far as holding the line.)
    const log = fake.log().filter((l) => l.tool === 'gpioset')
    // Never two holders of the line: after the first, every start follows a stop.
    const seq = log.map((l) => l.event).filter((e) => e === 'start' || e === 'stop')
    expect(seq.length).toBeGreaterThanOrEqual(3)
    expect(seq.every((e, i) => e === (i % 2 === 0 ? 'start' : 'stop'))).toBe(true)
    expect(seq.at(-1)).toBe('start')
    expect(log.some((l) => l.event === 'exit-at-once' || l.event === 'rejected')).toBe(false)
  })

  it('blinks a pattern: 1.x by a gpioset per level, 2.x by one gpioset --toggle', async () => {
    fake = fakeGpiod(version)
    panel = gpiodPanel(fake.env, { led: 'GPIO25' })
    await panel.start(() => {})
    panel.setLed('waiting_for_approval')
    const spawns = () => gpiosetSpawns(fake!)
    if (version === 1) {
      // on 150, off 150, on 150, off 1050: within ~500 ms both levels were held.
      await waitFor(() => spawns().filter((a) => a.at(-1) === '25=1').length >= 2, 15_000, 'blink')
      expect(spawns().every((a) => a[0] === '--mode=signal')).toBe(true)
    } else {
      await waitFor(() => spawns().some((a) => a[0] === '--toggle'), 15_000, 'pattern')
      await new Promise((r) => setTimeout(r, 500))
      // One process plays the whole pattern: nothing was spawned after it.
      expect(spawns().at(-1)).toEqual(['--toggle', '150ms,150ms,150ms,1050ms', 'GPIO25=1'])
      expect(spawns().filter((a) => a[0] === '--toggle')).toHaveLength(1)
    }
    expect(fake.log().some((l) => l.event === 'rejected')).toBe(false)
  })

  it('shows error when gpiomon dies, restarts it, and leaves no process behind on close', async () => {
    fake = fakeGpiod(version)
    fake.scriptMonitor([[{ ms: 50, exit: 1 }], BOUNCY_PRESS])
    const faults: boolean[] = []
    const events: ButtonEvent[] = []
    panel = gpiodPanel(fake.env, {
      button: 'GPIO17',
      led: 'GPIO25',
      backoffMs: 50,
      onFault: (f) => faults.push(f.healthy),
    })
    await panel.start((e) => events.push(e))
    panel.setLed('listening')
    await waitFor(() => faults.includes(false), 15_000, 'fault')
    // Error is a fast blink: the LED goes on and off repeatedly while the monitor is down.
    await waitFor(() => events.length >= 2, 15_000, 'events from the restarted gpiomon')
    const starts = fake.log().filter((l) => l.tool === 'gpiomon' && l.event === 'start')
    expect(starts.length).toBe(2)
    // 'listening' is steady on; the error flicker is gpioset restarted with each level (1.x) or
    // one gpioset toggling every 100 ms by itself (2.x).
    const spawns = () => gpiosetSpawns(fake!)
    if (version === 1) {
      await waitFor(() => spawns().length >= 4, 15_000, 'LED flicker')
      expect(new Set(spawns().map((a) => a.at(-1))).size).toBe(2)
    } else {
      await waitFor(() => spawns().some((a) => a[0] === '--toggle'), 15_000, 'LED flicker')
      expect(spawns().find((a) => a[0] === '--toggle')).toEqual([
        '--toggle',
        '100ms,100ms',
        'GPIO25=1',
      ])
    }
    const pids = fake
      .log()
      .filter((l) => l.event === 'start')
      .map((l) => l.pid)
    // The restarted gpiomon holds its line: the /proc check below can see live stand-ins.
    expect(liveStandIns(fake).length).toBeGreaterThan(0)
    await panel.close()
    panel = undefined
    for (const pid of pids) expect(isGone(pid)).toBe(true)
    expect(liveStandIns(fake)).toEqual([])
    expect(zombieChildren()).toEqual([])
  })
})

describe('start-up failures', () => {
  it('an LED line that does not exist fails the start with its name, and leaves no gpiomon running', async () => {
    fake = fakeGpiod(1)
    const p = gpiodPanel(fake.env, { button: 'GPIO17', led: 'GPIO99' })
    await expect(p.start(() => {})).rejects.toThrow(
      /GPIO line GPIO99 not found .*check the pin name with "gpioinfo"/,
    )
    await waitFor(() => fake!.log().some((l) => l.tool === 'gpiomon'), 5000, 'gpiomon start').catch(
      () => {},
    )
    for (const l of fake.log()) expect(isGone(l.pid)).toBe(true)
  })

  it('no gpiomon installed: says which package to install', async () => {
    const p = gpiodPanel({ PATH: '/nonexistent' }, { button: 'GPIO17' })
    await expect(p.start(() => {})).rejects.toThrow(
      'gpiomon is not installed (gpiomon: ENOENT); install it: sudo apt install gpiod',
    )
  })
})

describe('command lines', () => {
  it('parses edges per version: numeric codes differ between 1.x and 2.x', () => {
    expect(parseEdge(1, '0 12.000000001')).toEqual({ edge: 'falling', stampSec: 12.000000001 })
    expect(parseEdge(1, '1 12.000000001')?.edge).toBe('rising')
    // 1.x prints the nanoseconds unpadded: 5 µs past 12 s.
    expect(parseEdge(1, '1 12.5000')?.stampSec).toBeCloseTo(12.000005, 9)
    expect(parseEdge(2, '2 12.500000000')).toEqual({ edge: 'falling', stampSec: 12.5 })
    expect(parseEdge(2, 'falling 12.5')?.edge).toBe('falling')
    expect(parseEdge(2, 'falling')).toEqual({ edge: 'falling', stampSec: undefined })
    expect(parseEdge(2, '0 12.5')).toBeUndefined()
  })
})

describe('the real libgpiod tools (installed here; no /dev/gpiochip*, so only argument handling)', () => {
  const skip = missingCommands('gpiomon', 'gpioset')

  it.skipIf(skip)('detects the installed version', async () => {
    const v = await detectGpiodVersion()
    expect([1, 2]).toContain(v)
  })

  it.skipIf(skip)('accepts our argv: the tools get as far as opening the chip', async () => {
    const v = await detectGpiodVersion()
    const line =
      v === 1
        ? { version: 1 as const, name: 'GPIO17', chip: 'gpiochip0', offset: 17 }
        : { version: 2 as const, name: 'GPIO17' }
    for (const [cmd, args] of [
      ['gpiomon', gpiomonArgs(line, { bias: 'pull-up', debounceMs: 30 })],
      ['gpioset', gpiosetArgs(line, 1)],
    ] as const) {
      const r = await runCommand(cmd, args, process.env, 15_000)
      // Argument errors read "unrecognized option" / "invalid …" and are reported before any
      // chip is touched; this machine has no GPIO chip, so a good argv fails only at the chip.
      expect(r.stderr).not.toMatch(/unrecognized|invalid|usage|try .* --help/i)
      expect(r.code).not.toBe(0)
    }
  })
})
