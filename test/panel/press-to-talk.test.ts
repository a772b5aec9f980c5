import { describe, expect, it } from 'vitest'
import { ButtonOnset } from '../../src/audio/button-onset.js'
import { silentLogger } from '../../src/core/logger.js'
import { NullPanel } from '../../src/panel/null-panel.js'
import { PanelController, type PanelEvent } from '../../src/panel/panel-controller.js'
import type { Onset } from '../../src/ports/onset.js'
import type { ButtonEvent } from '../../src/ports/panel.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

function rig() {
  const clock = new VirtualClock()
  const panel = new NullPanel()
  let press: (e: ButtonEvent) => void = () => {}
  panel.start = async (cb) => {
    press = cb
  }
  const ctl = new PanelController({
    panel,
    clock,
    logger: silentLogger,
    longPressMs: 800,
    pressToTalk: true,
  })
  const events: PanelEvent[] = []
  ctl.on((e) => events.push(e))
  return {
    clock,
    panel,
    ctl,
    events,
    async hold(ms: number) {
      press({ kind: 'press', atMs: clock.now() })
      await clock.advance(ms)
      press({ kind: 'release', atMs: clock.now() })
      await clock.advance(0)
    },
  }
}

/**
 * Issue 22 item 1, `button` mode on a ReSpeaker's one button: a short press talks, a long press
 * toggles mute — recognised while held — and mute stays authoritative: muted, a press to talk
 * opens nothing, and only the long press unmutes.
 */
describe('press to talk on one button', () => {
  it('a short press talks; a long press mutes, and while muted a short press does nothing', async () => {
    const r = rig()
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
    for (let i = 0; i < 100; i++) b.hear(new Uint8Array(640).fill(i))
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
})
