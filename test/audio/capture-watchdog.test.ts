import { expect, it } from 'vitest'
import { CaptureWatchdog } from '../../src/audio/capture-watchdog.js'
import { silentLogger } from '../../src/core/logger.js'
import type { AudioInSink } from '../../src/ports/audio.js'
import type { Clock } from '../../src/ports/clock.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

it('a device that stays dead is restarted ever less often, and a device that comes back resets the wait', async () => {
  const clock = new VirtualClock()
  const starts: number[] = []
  let sink: AudioInSink | undefined
  const dead = {
    sampleRateHz: 16_000,
    start: async (s: AudioInSink) => {
      starts.push(clock.now())
      sink = s
    },
    stop: async () => {},
  }
  const t0 = clock.now()
  const errors: string[] = []
  const w = new CaptureWatchdog({
    source: dead,
    clock,
    stallMs: 3000,
    deviceName: 'mic',
    logger: silentLogger,
  })
  await w.start({ frame: () => {}, error: (e) => errors.push(e.message) })
  await clock.advance(100_000)
  const restarts = starts.slice(1).map((t) => t - t0)
  // Stalls noticed at 3, 9 (3+6), 21 (+12), 45 (+24), then every 48 s — checked every 1.5 s.
  expect(restarts.slice(0, 5)).toEqual([3000, 9000, 21_000, 45_000, 93_000])
  expect(errors[0]).toMatch(/capture device "mic" delivered no audio for 3000 ms; restarting it/)
  // Frames again: the next stall is noticed after the short wait once more.
  sink?.frame(new Uint8Array(640), clock.now())
  const before = starts.length
  await clock.advance(4500) // 3 s of silence, noticed at the next 1.5 s check
  expect(starts.length).toBe(before + 1)
  await w.stop()
})

/**
 * The virtual clock, and time the event loop was held for: it passes on the readings while no
 * timer fires in it (a CPU quota's throttling), so the next timers run late.
 */
function holdable(clock: VirtualClock): { clock: Clock; hold: (ms: number) => void } {
  let held = 0
  return {
    clock: {
      now: () => clock.now() + held,
      monotonic: () => clock.monotonic() + held,
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
      clearTimeout: (h) => clock.clearTimeout(h),
    },
    hold: (ms) => {
      held += ms
    },
  }
}

it('a held event loop is no stalled microphone: the silence counts only up to when the check was due; a dead one is still seen', async () => {
  const virtual = new VirtualClock()
  const { clock, hold } = holdable(virtual)
  let starts = 0
  let sink: AudioInSink | undefined
  const mic = {
    sampleRateHz: 16_000,
    start: async (s: AudioInSink) => {
      starts++
      sink = s
    },
    stop: async () => {},
  }
  const errors: string[] = []
  const w = new CaptureWatchdog({
    source: mic,
    clock,
    stallMs: 3000,
    deviceName: 'mic',
    logger: silentLogger,
  })
  await w.start({ frame: () => {}, error: (e) => errors.push(e.message) })
  await virtual.advance(1400)
  sink?.frame(new Uint8Array(640), clock.now())
  // The loop is held 3.5 s; the check due at 1.5 s runs first, before the waiting frames are read.
  hold(3500)
  await virtual.advance(100)
  expect(errors).toEqual([])
  expect(starts).toBe(1)
  // The frames that waited are read and the microphone goes on.
  sink?.frame(new Uint8Array(640), clock.now())
  await virtual.advance(1000)
  expect(errors).toEqual([])
  // Then the device really dies during another hold: seen at a later check, and restarted.
  hold(3500)
  await virtual.advance(4500)
  expect(errors[0]).toMatch(/delivered no audio/)
  expect(starts).toBe(2)
  await w.stop()
})
