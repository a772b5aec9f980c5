import { expect, it } from 'vitest'
import { CaptureWatchdog } from '../../src/audio/capture-watchdog.js'
import { silentLogger } from '../../src/core/logger.js'
import type { AudioInSink } from '../../src/ports/audio.js'
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
