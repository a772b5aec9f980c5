import { describe, expect, it } from 'vitest'
import { AnyOnset } from '../../src/audio/any-onset.js'
import { ButtonOnset } from '../../src/audio/button-onset.js'
import { silentLogger } from '../../src/core/logger.js'
import { DeviceState } from '../../src/device/device-state.js'
import {
  ColourLedBlinker,
  LEVEL_SHOWN_MS,
  levelColours,
} from '../../src/panel/colour-led-blinker.js'
import { Debouncer } from '../../src/panel/debouncer.js'
import { LedBlinker } from '../../src/panel/led-blinker.js'
import { LED_PATTERNS } from '../../src/panel/led-patterns.js'
import { NullPanel } from '../../src/panel/null-panel.js'
import {
  PanelController,
  type PanelEvent,
  VOLUME_BUTTON_FLOOR,
  VOLUME_HOLD_MS,
  VOLUME_STEP_MS,
} from '../../src/panel/panel-controller.js'
import type { Onset } from '../../src/ports/onset.js'
import type { ButtonEvent, LedState, Panel } from '../../src/ports/panel.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

/** The LED sampled every 50 ms for `ms`: a string of '#' (on) and '.' (off). */
async function sample(state: LedState, ms = 4000): Promise<string> {
  const clock = new VirtualClock()
  let on = false
  const blinker = new LedBlinker(clock, (v) => {
    on = v
  })
  blinker.show(state)
  let s = ''
  for (let t = 0; t < ms; t += 50) {
    s += on ? '#' : '.'
    await clock.advance(50)
  }
  return s
}

describe('LED patterns on the virtual clock', () => {
  it('draws each state as its own rhythm', async () => {
    expect(await sample('idle', 1000)).toBe('....................')
    expect(await sample('listening', 1000)).toBe('####################')
    expect(await sample('speaking', 2400)).toBe(
      `${'#'.repeat(12)}${'.'.repeat(12)}${'#'.repeat(12)}${'.'.repeat(12)}`,
    )
    expect(await sample('waiting_for_approval', 1500)).toBe(`###...###${'.'.repeat(21)}`)
    expect(await sample('muted', 4000)).toBe(`##${'.'.repeat(38)}##${'.'.repeat(38)}`)
    expect(await sample('error', 600)).toBe('##..##..##..')
  })

  it('no two states look alike over four seconds', async () => {
    const states = Object.keys(LED_PATTERNS) as LedState[]
    const drawn = await Promise.all(states.map((s) => sample(s)))
    expect(new Set(drawn).size).toBe(states.length)
  })

  it('showing the same state again does not restart the blink; stop leaves it dark', async () => {
    const clock = new VirtualClock()
    const levels: Array<[number, boolean]> = []
    const start = clock.now()
    const blinker = new LedBlinker(clock, (v) => levels.push([clock.now() - start, v]))
    blinker.show('speaking')
    await clock.advance(500)
    blinker.show('speaking')
    await clock.advance(200)
    expect(levels).toEqual([
      [0, true],
      [600, false],
    ])
    blinker.show('listening')
    blinker.stop()
    expect(levels.slice(2)).toEqual([
      [700, true],
      [700, false],
    ])
    expect(clock.pending).toBe(0)
  })
})

describe('software debounce', () => {
  it('collapses bounce into one change, dated when the contact first moved', async () => {
    const clock = new VirtualClock()
    const t0 = clock.now()
    const out: Array<[boolean, number]> = []
    const d = new Debouncer(clock, 30, (p, at) => out.push([p, at - t0]))
    d.input(true)
    await clock.advance(2)
    d.input(false)
    await clock.advance(2)
    d.input(true)
    await clock.advance(100)
    d.input(true) // a repeat of the settled level
    await clock.advance(100)
    expect(out).toEqual([[true, 4]])
    d.input(false)
    await clock.advance(10)
    d.input(true) // a glitch shorter than the debounce: nothing happened
    await clock.advance(100)
    expect(out).toEqual([[true, 4]])
  })

  it('edges read late but dated by their source: a level that held past the debounce counts, however close they arrive', async () => {
    const clock = new VirtualClock()
    const t0 = clock.now()
    const out: Array<[boolean, number]> = []
    const d = new Debouncer(clock, 30, (p, at) => out.push([p, at - t0]))
    // Pressed at t0, released 1200 ms later, both read now in one burst.
    await clock.advance(1300)
    d.input(true, t0)
    d.input(false, t0 + 1200)
    await clock.advance(100)
    expect(out).toEqual([
      [true, 0],
      [false, 1200],
    ])
    // A real bounce, dated: 5 ms apart, still nothing.
    d.input(true, t0 + 1400)
    d.input(false, t0 + 1405)
    await clock.advance(100)
    expect(out).toHaveLength(2)
  })
})

function rig(opts: { longPressMs?: number; talk?: 'press' | 'hold' } = {}) {
  const clock = new VirtualClock()
  const panel = new NullPanel()
  let press: (e: ButtonEvent) => void = () => {}
  panel.start = async (cb) => {
    press = cb
  }
  const ctl = new PanelController({ panel, clock, logger: silentLogger, ...opts })
  const events: PanelEvent[] = []
  ctl.on((e) => events.push(e))
  return {
    clock,
    panel,
    ctl,
    events,
    edge: (e: ButtonEvent) => press(e),
    async hold(ms: number) {
      press({ kind: 'press', atMs: clock.now() })
      await clock.advance(ms)
      press({ kind: 'release', atMs: clock.now() })
      await clock.advance(0)
    },
  }
}

describe('the button and the LED together', () => {
  it('a short press toggles mute, and muted wins over every activity on the LED', async () => {
    const r = rig()
    await r.ctl.start()
    r.ctl.setActivity('speaking')
    expect(r.panel.led).toBe('speaking')
    await r.hold(120)
    expect(r.ctl.muted).toBe(true)
    for (const a of ['idle', 'listening', 'speaking', 'waiting_for_approval', 'error'] as const) {
      r.ctl.setActivity(a)
      expect(r.panel.led).toBe('muted')
    }
    await r.hold(120)
    expect(r.panel.led).toBe('error')
    expect(r.events.map((e) => e.kind === 'mute' && e.muted)).toEqual([true, false])
  })

  it('a long press while speaking stops it without muting — while the button is still held', async () => {
    const r = rig({ longPressMs: 800 })
    await r.ctl.start()
    r.ctl.setActivity('speaking')
    const pressedAt = r.clock.now()
    await r.hold(2000)
    // Dated at 800 ms, not at the release at 2000 ms: the speaker stopped under the finger.
    const stop = r.events.find((e) => e.kind === 'stop_speaking')
    expect(stop?.atMs).toBe(pressedAt + 800)
    expect(r.ctl.muted).toBe(false)
    expect(r.events.filter((e) => e.kind === 'mute')).toEqual([])
  })

  it('a long press when not speaking neither mutes nor stops anything', async () => {
    const r = rig()
    await r.ctl.start()
    r.ctl.setActivity('listening')
    await r.hold(1500)
    expect(r.events.map((e) => e.kind)).toEqual(['long_press_ignored'])
    expect(r.ctl.muted).toBe(false)
  })

  it('mute from a phone is the same switch, reported as remote', async () => {
    const r = rig()
    await r.ctl.start()
    r.ctl.setMuted(true)
    r.ctl.setMuted(true)
    expect(r.events).toEqual([{ kind: 'mute', muted: true, source: 'remote', atMs: r.clock.now() }])
    expect(r.panel.led).toBe('muted')
  })
})

describe('the volume on the one button (hardware/button.md)', () => {
  it('held on while nothing plays, it steps the volume, shown as a level; each hold goes the other way', async () => {
    const clock = new VirtualClock()
    const device = new DeviceState({ volume: 60 })
    const panel = new NullPanel()
    const levels: number[] = []
    let press: (e: ButtonEvent) => void = () => {}
    panel.start = async (cb) => {
      press = cb
    }
    ;(panel as Panel).showLevel = (p) => levels.push(p)
    const ctl = new PanelController({ panel, clock, logger: silentLogger, device })
    const events: PanelEvent[] = []
    ctl.on((e) => events.push(e))
    await ctl.start()
    device.setActivity('listening')
    const hold = async (ms: number) => {
      press({ kind: 'press', atMs: clock.now() })
      await clock.advance(ms)
      press({ kind: 'release', atMs: clock.now() })
    }
    // 0.8 s: a long press (ignored, as before); 1.8 s: the level shows; then a step every 0.6 s.
    await hold(800 + VOLUME_HOLD_MS + 2 * VOLUME_STEP_MS)
    expect(device.volume).toBe(40)
    expect(levels).toEqual([60, 50, 40])
    expect(events.map((e) => e.kind)).toEqual(['long_press_ignored', 'volume'])
    expect(device.muted).toBe(false)
    await hold(800 + VOLUME_HOLD_MS + 3 * VOLUME_STEP_MS)
    expect(device.volume).toBe(70)
    // Down to the floor and back up: the button never silences the speaker.
    await hold(800 + VOLUME_HOLD_MS + 7 * VOLUME_STEP_MS)
    expect(levels.at(-2)).toBe(VOLUME_BUTTON_FLOOR)
    expect(device.volume).toBe(VOLUME_BUTTON_FLOOR + 10)
  })

  it('three colour LEDs show the level for a moment, then the state again', async () => {
    const clock = new VirtualClock()
    const painted: string[] = []
    const blinker = new ColourLedBlinker(clock, (c) => painted.push(c ? 'state' : 'dark'), {
      count: 3,
      paint: (cs) => painted.push(cs.map((c) => (c ? Math.round(c.r / 2.55) : 0)).join(',')),
    })
    blinker.show('listening')
    blinker.showLevel(50)
    await clock.advance(LEVEL_SHOWN_MS - 1)
    expect(painted).toEqual(['state', '100,50,0'])
    await clock.advance(1)
    expect(painted.at(-1)).toBe('state')
    expect(levelColours(100, 3).every((c) => c?.r === 255)).toBe(true)
    expect(levelColours(0, 3)).toEqual([undefined, undefined, undefined])
    blinker.stop()
  })
})

/**
 * Issue 22 item 1, `button` mode on a ReSpeaker's one button: a short press talks, a long press
 * toggles mute — recognised while held — and mute stays authoritative: muted, a press to talk
 * opens nothing, and only the long press unmutes.
 */
describe('press to talk on one button', () => {
  it('a short press talks; a long press mutes, and while muted a short press does nothing', async () => {
    const r = rig({ longPressMs: 800, talk: 'press' })
    await r.ctl.start()
    await r.hold(150)
    expect(r.events.map((e) => e.kind)).toEqual(['talk'])
    await r.hold(1500)
    expect(r.ctl.muted).toBe(true)
    expect(r.panel.led).toBe('muted')
    // Muted at 800 ms, under the finger, not at the release.
    const mute = r.events.find((e) => e.kind === 'mute')
    expect(mute?.atMs).toBe(r.clock.now() - 1500 + 800)
    await r.hold(150)
    expect(r.events.map((e) => e.kind)).toEqual(['talk', 'mute'])
    await r.hold(900)
    expect(r.ctl.muted).toBe(false)
    await r.hold(150)
    expect(r.events.map((e) => e.kind)).toEqual(['talk', 'mute', 'mute', 'talk'])
  })

  it('a press opens a session with the half second heard before it', () => {
    const b = new ButtonOnset()
    const onsets: Onset[] = []
    b.listen((o) => onsets.push(o))
    for (let i = 0; i < 100; i++) b.hear(new Uint8Array(640).fill(i), i * 20)
    b.pressed(1234)
    expect(onsets).toHaveLength(1)
    expect(onsets[0]?.cause).toBe('button')
    expect(onsets[0]?.atMs).toBe(1234)
    // 500 ms: the last 25 frames, oldest first.
    expect(onsets[0]?.preRoll.byteLength).toBe(25 * 640)
    expect(onsets[0]?.preRoll[0]).toBe(75)
    b.rearm()
    b.pressed(2000)
    expect(onsets[1]?.preRoll.byteLength).toBe(0)
  })

  it('a hold opens it with what was said while the button was held, from half a second before the press', () => {
    const b = new ButtonOnset()
    const onsets: Onset[] = []
    b.listen((o) => onsets.push(o))
    // 4 s of frames, numbered; let go after a 1.2 s hold: 1.7 s, the last 85 frames.
    for (let i = 0; i < 200; i++) b.hear(new Uint8Array(640).fill(i % 256), i * 20)
    b.pressed(4000, 1200)
    expect(onsets[0]?.preRoll.byteLength).toBe(85 * 640)
    expect(onsets[0]?.preRoll[0]).toBe(115)
    expect(onsets[0]?.preRoll.at(-1)).toBe(199)
    // A hold longer than what is kept: all that is kept, 3 s.
    b.pressed(4000, 9000)
    expect(onsets[1]?.preRoll.byteLength).toBe(150 * 640)
    // Muted, then unmuted (no frames between): a press just after sends nothing from before.
    for (let i = 0; i < 10; i++) b.hear(new Uint8Array(640).fill(250), 30_000 + i * 20)
    b.pressed(30_200, 1200)
    expect(onsets[2]?.preRoll.byteLength).toBe(10 * 640)
    expect(onsets[2]?.preRoll.every((v) => v === 250)).toBe(true)
  })
})

/**
 * `wake` mode: the short press stays mute, and a hold let go before the volume starts talks — for
 * a room too loud for the wake phrase to be heard (docs/wake-word.md, "Measured": most phrases
 * are lost in 10 dB of babble). Muted, it opens nothing; held on, it is the volume; while the
 * speaker talks, the long press still stops it under the finger.
 */
describe('hold to talk beside the wake word', () => {
  it('a hold let go between the long press and the volume talks; a short press still mutes', async () => {
    const r = rig({ longPressMs: 800, talk: 'hold' })
    await r.ctl.start()
    const from = r.clock.now()
    await r.hold(1000)
    // Dated at the release: the person speaks after letting go.
    expect(r.events).toEqual([{ kind: 'talk', atMs: from + 1000, heldMs: 1000 }])
    await r.hold(150)
    expect(r.ctl.muted).toBe(true)
    expect(r.events.map((e) => e.kind)).toEqual(['talk', 'mute'])
    // Muted, the hold opens nothing: mute is authoritative.
    await r.hold(1000)
    expect(r.events.map((e) => e.kind)).toEqual(['talk', 'mute'])
    await r.hold(150)
    expect(r.ctl.muted).toBe(false)
    await r.hold(799)
    expect(r.events.map((e) => e.kind)).toEqual(['talk', 'mute', 'mute', 'mute'])
  })

  it('the LED shows listening while a let-go would talk — the cue — but never over mute, and not into the volume', async () => {
    const r = rig({ longPressMs: 800, talk: 'hold' })
    await r.ctl.start()
    const t = r.clock.now()
    r.edge({ kind: 'press', atMs: t })
    await r.clock.advance(799)
    expect(r.panel.led).toBe('idle')
    await r.clock.advance(1)
    expect(r.panel.led).toBe('listening')
    // Into the volume: the cue goes, the state comes back.
    await r.clock.advance(VOLUME_HOLD_MS)
    expect(r.panel.led).toBe('idle')
    r.edge({ kind: 'release', atMs: r.clock.now() })
    expect(r.events.map((e) => e.kind)).toEqual(['volume'])
    // Let go in the window: the cue stays until the release, which talks.
    r.edge({ kind: 'press', atMs: r.clock.now() })
    await r.clock.advance(900)
    expect(r.panel.led).toBe('listening')
    r.edge({ kind: 'release', atMs: r.clock.now() })
    expect(r.panel.led).toBe('idle')
    expect(r.events.map((e) => e.kind)).toEqual(['volume', 'talk'])
    // Muted: no cue, the blip of mute stays, and the hold opens nothing.
    r.ctl.setMuted(true)
    r.edge({ kind: 'press', atMs: r.clock.now() })
    await r.clock.advance(900)
    expect(r.panel.led).toBe('muted')
    r.edge({ kind: 'release', atMs: r.clock.now() })
    expect(r.events.map((e) => e.kind)).toEqual(['volume', 'talk', 'mute'])
  })

  it('held on into the volume it sets the volume and does not talk; over a reply it stops the reply', async () => {
    const r = rig({ longPressMs: 800, talk: 'hold' })
    await r.ctl.start()
    await r.hold(800 + VOLUME_HOLD_MS + VOLUME_STEP_MS)
    expect(r.events.map((e) => e.kind)).toEqual(['volume'])
    r.ctl.setActivity('speaking')
    await r.hold(1000)
    expect(r.events.map((e) => e.kind)).toEqual(['volume', 'stop_speaking'])
  })

  it('a release delivered before the long-press timer fired still talks', async () => {
    const r = rig({ longPressMs: 800, talk: 'hold' })
    await r.ctl.start()
    // Both edges arrive late, together (a stalled event loop): the release says 1.1 s.
    const t = r.clock.now()
    r.edge({ kind: 'press', atMs: t })
    r.edge({ kind: 'release', atMs: t + 1100 })
    expect(r.events).toEqual([{ kind: 'talk', atMs: t + 1100, heldMs: 1100 }])
    await r.clock.advance(5000)
    expect(r.events).toHaveLength(1)
  })

  it('the wake stage and the button open sessions through one source', () => {
    const wake: Onset[] = []
    let tellWake: ((o: Onset) => void) | undefined
    const stage = {
      listen: (l: (o: Onset) => void) => {
        tellWake = l
      },
      rearm: () => wake.push({ cause: 'wake', preRoll: new Uint8Array(), atMs: -1 }),
      close: () => {},
    }
    const button = new ButtonOnset()
    const either = new AnyOnset([stage, button])
    const onsets: Onset[] = []
    either.listen((o) => onsets.push(o))
    for (let i = 0; i < 30; i++) either.hear(new Uint8Array(640).fill(i), i * 20)
    button.pressed(600)
    tellWake?.({ cause: 'wake', preRoll: new Uint8Array(64_000), atMs: 700 })
    expect(onsets.map((o) => [o.cause, o.preRoll.byteLength])).toEqual([
      ['button', 25 * 640],
      ['wake', 64_000],
    ])
    either.rearm()
    expect(wake).toHaveLength(1)
    button.pressed(800)
    expect(onsets[2]?.preRoll.byteLength).toBe(0)
  })
})
