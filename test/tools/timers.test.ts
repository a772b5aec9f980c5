import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { silentLogger } from '../../src/core/logger.js'
import { ToolSet } from '../../src/core/tool-set.js'
import { DeviceState } from '../../src/device/device-state.js'
import { NullPanel } from '../../src/panel/null-panel.js'
import { PanelController } from '../../src/panel/panel-controller.js'
import type { ButtonEvent } from '../../src/ports/panel.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { chimePcm } from '../../src/tools/chime.js'
import { nextLocalTime } from '../../src/tools/local-time.js'
import { DEFAULT_RING_MS, TimerService } from '../../src/tools/timer-service.js'
import { timerTools } from '../../src/tools/timers.js'
import { coreFixture } from '../helpers/core.js'

class RecordingSink {
  readonly sampleRateHz = 24_000
  readonly writes: Uint8Array[] = []
  write(pcm: Uint8Array): void {
    this.writes.push(pcm)
  }
}

function boot(path: string, clock: VirtualClock) {
  const store = new SqliteStore(path)
  const sink = new RecordingSink()
  const service = new TimerService({ store, clock, sink, logger: silentLogger })
  const rang: string[] = []
  service.onRing((t, late) => rang.push(`${t.label}${late ? ' (late)' : ''}`))
  const started = service.start()
  return { store, sink, service, rang, started }
}

describe('timers and alarms', () => {
  it('a timer set by voice rings the chime through the speaker when due, once', async () => {
    const f = coreFixture()
    const { sink, service, rang } = boot(':memory:', f.clock)
    const tools = new ToolSet(timerTools(service, f.clock, 'Europe/London'))
    const out = await tools.call(f.ctx({ channel: 'voice' }), 'set_timer', {
      seconds: 600,
      label: 'pasta',
    })
    expect(out).toMatchObject({ ok: true, value: { label: 'pasta', secondsLeft: 600 } })
    await f.clock.advance(599_000)
    expect(sink.writes).toHaveLength(0)
    await f.clock.advance(1000)
    expect(rang).toEqual(['pasta'])
    expect(sink.writes).toHaveLength(1)
    expect(sink.writes[0]).toEqual(chimePcm(24_000))
    await f.clock.advance(3_600_000)
    expect(rang).toEqual(['pasta'])
    expect(f.pending).toEqual([]) // allowed by voice: no phone was asked
  })

  it('survives a restart: pending timers are re-armed, recently due ones ring late, old ones are missed', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'nocturn-timers-')), 'nocturn.db')
    const clock = new VirtualClock()
    const first = boot(path, clock)
    first.service.add('timer', clock.now() + 60_000, 'tea')
    first.service.add('timer', clock.now() + 10 * 60_000, 'eggs')
    first.service.add('alarm', clock.now() + 3 * 3_600_000, 'wake')
    first.service.add('timer', clock.now() + 5_000, 'long gone')
    await clock.advance(1000)
    // The power goes: nothing in memory survives.
    first.service.close()
    first.store.close()
    await clock.advance(5 * 60_000) // 'tea' came due 4 minutes ago, 'long gone' 6 minutes ago… both within grace
    const second = boot(path, clock)
    expect(second.started.rungLate.map((t) => t.label)).toEqual(['long gone', 'tea'])
    expect(second.rang).toEqual(['long gone (late)', 'tea (late)'])
    await clock.advance(5 * 60_000)
    expect(second.rang).toEqual(['long gone (late)', 'tea (late)', 'eggs'])
    second.service.close()
    second.store.close()
    // Off for a day: the alarm is far past the grace and is recorded missed, not rung.
    await clock.advance(24 * 3_600_000)
    const third = boot(path, clock)
    expect(third.started.missed.map((t) => t.label)).toEqual(['wake'])
    expect(third.rang).toEqual([])
    expect(third.store.pendingTimers()).toEqual([])
    third.store.close()
  })

  it('cancel by label; ambiguity is explained to the model', async () => {
    const f = coreFixture()
    const { service, rang } = boot(':memory:', f.clock)
    const tools = new ToolSet(timerTools(service, f.clock, 'UTC'))
    const ctx = f.ctx({ channel: 'voice' })
    await tools.call(ctx, 'set_timer', { seconds: 60, label: 'tea' })
    await tools.call(ctx, 'set_timer', { seconds: 120, label: 'rice' })
    const vague = await tools.call(ctx, 'cancel_timer', {})
    expect(vague).toMatchObject({ ok: false, error: expect.stringContaining('2 timers match') })
    expect(await tools.call(ctx, 'cancel_timer', { label: 'Tea' })).toMatchObject({ ok: true })
    const listed = await tools.call(ctx, 'list_timers', {})
    expect(listed).toMatchObject({ ok: true, value: { timers: [{ label: 'rice' }] } })
    await f.clock.advance(200_000)
    expect(rang).toEqual(['rice'])
  })

  it('alarms: next occurrence of a local time, across a daylight-saving change', () => {
    // 2026-03-28 22:00 UTC; London moves to BST at 01:00 UTC on the 29th.
    const now = Date.UTC(2026, 2, 28, 22, 0)
    expect(new Date(nextLocalTime(now, '07:30', 'Europe/London')).toISOString()).toBe(
      '2026-03-29T06:30:00.000Z',
    )
    expect(new Date(nextLocalTime(now, '21:00', 'Europe/London')).toISOString()).toBe(
      '2026-03-29T20:00:00.000Z',
    )
    expect(new Date(nextLocalTime(now, '23:15', 'UTC')).toISOString()).toBe(
      '2026-03-28T23:15:00.000Z',
    )
    expect(() => nextLocalTime(now, '25:00', 'UTC')).toThrow(/not a time of day/)
  })

  it('the chime is audible PCM of the sink rate, without a click at the start', () => {
    const pcm = chimePcm(16_000, 1)
    const view = new DataView(pcm.buffer)
    const samples = Array.from({ length: pcm.length / 2 }, (_, i) => view.getInt16(i * 2, true))
    expect(samples.length).toBe(Math.round(16_000 * 0.9))
    expect(Math.max(...samples)).toBeGreaterThan(10_000)
    expect(Math.abs(samples[1] as number)).toBeLessThan(2000)
  })
})

describe('a ringing timer', () => {
  function ringRig() {
    const f = coreFixture()
    const store = new SqliteStore(':memory:')
    const sink = new RecordingSink()
    const device = new DeviceState()
    const service = new TimerService({ store, clock: f.clock, sink, logger: silentLogger, device })
    service.start()
    const panel = new NullPanel()
    let press: (e: ButtonEvent) => void = () => {}
    panel.start = async (cb) => {
      press = cb
    }
    const ctl = new PanelController({ panel, clock: f.clock, logger: silentLogger, device })
    const tools = new ToolSet(timerTools(service, f.clock, 'UTC'))
    return { f, sink, device, service, panel, ctl, tools, press: (e: ButtonEvent) => press(e) }
  }

  it('repeats the chime until the button stops it; the LED and the state show it ringing; mute is untouched', async () => {
    const r = ringRig()
    await r.ctl.start()
    r.service.add('timer', r.f.clock.now() + 60_000, 'eggs')
    expect(r.device.snapshot.nextTimer).toMatchObject({
      kind: 'timer',
      dueAt: r.f.clock.now() + 60_000,
    })
    await r.f.clock.advance(60_000)
    expect(r.device.snapshot.state).toBe('ringing')
    expect(r.panel.led).toBe('ringing')
    expect(r.device.snapshot.nextTimer).toBeNull()
    await r.f.clock.advance(8000)
    expect(r.sink.writes).toHaveLength(3) // at 0, 4 and 8 s
    r.press({ kind: 'press', atMs: r.f.clock.now() })
    await r.f.clock.advance(100)
    r.press({ kind: 'release', atMs: r.f.clock.now() })
    expect(r.device.muted).toBe(false) // the press stopped the ring, it did not mute
    expect(r.device.snapshot.state).toBe('idle')
    expect(r.panel.led).toBe('idle')
    await r.f.clock.advance(60_000)
    expect(r.sink.writes).toHaveLength(3)
  })

  it('stops by voice (stop_ringing, allowed by voice) and from Home Assistant (the device stop); alone it ends after a minute', async () => {
    const r = ringRig()
    r.service.add('timer', r.f.clock.now() + 1000, null)
    await r.f.clock.advance(1000)
    expect(r.device.snapshot.ringing).toHaveLength(1)
    const out = await r.tools.call(r.f.ctx({ channel: 'voice' }), 'stop_ringing', {})
    expect(out).toMatchObject({ ok: true, value: { stopped: 1 } })
    expect(r.f.pending).toEqual([])
    expect(r.device.snapshot.ringing).toEqual([])
    r.service.add('alarm', r.f.clock.now() + 1000, null)
    await r.f.clock.advance(1000)
    expect(r.device.snapshot.state).toBe('ringing')
    r.device.stop('home_assistant')
    expect(r.device.snapshot.state).toBe('idle')
    r.service.add('timer', r.f.clock.now() + 1000, null)
    await r.f.clock.advance(1000)
    const before = r.sink.writes.length
    await r.f.clock.advance(DEFAULT_RING_MS + 4000)
    expect(r.device.snapshot.ringing).toEqual([])
    // Repeats at 4, 8, … 56 s after the first chime; at 60 s the ring ends.
    expect(r.sink.writes.length - before).toBe(DEFAULT_RING_MS / 4000 - 1)
  })
})
