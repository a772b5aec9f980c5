import { describe, expect, it } from 'vitest'
import { ReadCadence } from '../../src/audio/read-cadence.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

// The cadence's beat on a virtual clock: a source whose 20 ms frames arrive on time, read the way
// ArecordMic reads its recorder (what waits is handed on at a read; reading on, each frame as it
// comes). mic-cadence.test.ts runs the same cadence on a real arecord.

interface Source {
  readonly cadence: ReadCadence
  /** Frames handed on when each read ended. */
  readonly ends: number[]
  /** Frames handed on so far. */
  handed(): number
  /** Called while the given frame (from 1) is handed on. */
  onFrame(fn: (frame: number) => void): void
}

/** `period`: frames that arrive together, a period's worth every `period` frames (an ALSA period). */
function source(clock: VirtualClock, period = 1): Source {
  let arrived = 0
  let handed = 0
  let reading = true
  let onFrame: (frame: number) => void = () => {}
  const ends: number[] = []
  const read = () => {
    if (handed === arrived) return
    while (handed < arrived) {
      cadence.frame()
      handed++
      onFrame(handed)
      cadence.handed()
    }
    ends.push(handed)
    reading = cadence.read()
  }
  const cadence: ReadCadence = new ReadCadence({
    clock,
    frameMs: 20,
    // libuv's next poll: at once here, as nothing else runs.
    resume: () => {
      reading = true
      clock.setTimeout(() => reading && read(), 0)
    },
    // ArecordMic's: what waits is read now; nothing waiting, it reads on.
    readNow: () => {
      if (handed === arrived) reading = true
      else read()
    },
  })
  const arrive = () => {
    arrived += period
    if (reading) read()
    clock.setTimeout(arrive, 20 * period)
  }
  clock.setTimeout(arrive, 20 * period)
  return {
    cadence,
    ends,
    handed: () => handed,
    onFrame: (fn) => {
      onFrame = fn
    },
  }
}

/** `count` burst ends `every` frames apart from `first`: each is the end of a read. */
function beat(first: number, every: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => first + k * every)
}

describe('bursts set by a listener (every with nextMs)', () => {
  it('end where asked, then a burst apart', async () => {
    const clock = new VirtualClock()
    const s = source(clock)
    s.cadence.every(80)
    // On frame 43 the listener's batch is 320 ms, the next complete in 120 ms (6 frames).
    s.onFrame((k) => k === 43 && s.cadence.every(320, 120))
    await clock.advance(20 * 200)
    const expected = beat(49, 16, 9)
    expect(expected.filter((e) => s.ends.includes(e))).toEqual(expected)
    // A read now and then comes early and reads on to its burst's end (the cadence's nudge): at
    // most two a burst, against 4 at 80 ms.
    expect(s.ends.filter((e) => e > 49 && e <= 193).length).toBeLessThanOrEqual(2 * 9)
  })

  it('a shorter burst asked between reads takes back the read timed for the longer one', async () => {
    const clock = new VirtualClock()
    const s = source(clock)
    s.cadence.every(320)
    await clock.advance(20 * 100 + 5)
    const last = s.ends.at(-1) ?? 0
    expect(last).toBe(96)
    // 25 ms after a burst's read, while the next is timed 320 ms on: near a threshold now, its
    // next chunk complete 80 ms after the frames it has.
    await clock.advance(20)
    const arrived = 101
    s.cadence.every(80, 80)
    await clock.advance(20 * 40)
    const next = s.ends.filter((e) => e > last)
    // Read at once, what waited; then on the 4-frame beat the listener asked for. Timed as
    // before, the first read would have come with frame 112.
    expect(next[0]).toBe(arrived)
    const expected = beat(104, 4, 8)
    expect(expected.filter((e) => s.ends.includes(e))).toEqual(expected)
  })

  it('after a switch to shorter bursts, the reads keep the new beat when they find their frames waiting', async () => {
    // Frames come two at a time (a 40 ms period). The switch comes 49 ms after a 320 ms burst's
    // read, with half of the next 80 ms burst there: the read timed for the rest finds it already
    // waiting, and takes its beat from when it was due. Due as the old bursts were, the next 80 ms
    // burst was read 320 ms later, and a louder speaker's wake lost its claim round (bench/RESULTS.md,
    // "two speakers, one wake").
    const clock = new VirtualClock()
    const s = source(clock, 2)
    s.cadence.every(320)
    await clock.advance(20 * 97 + 5)
    const last = s.ends.at(-1) ?? 0
    expect(last).toBe(96)
    await clock.advance(45)
    s.cadence.every(80, 80)
    await clock.advance(20 * 40)
    const next = s.ends.filter((e) => e > last)
    const gaps = next.slice(1).map((e, k) => e - (next[k] ?? 0))
    expect(Math.max(...gaps), JSON.stringify(next)).toBeLessThanOrEqual(4)
    expect(next.at(-1)).toBeGreaterThanOrEqual(last + 36)
  })
})
