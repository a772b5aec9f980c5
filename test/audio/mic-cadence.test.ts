import { afterEach, describe, expect, it } from 'vitest'
import { ArecordMic } from '../../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MicRouter } from '../../src/audio/mic-router.js'
import { silentLogger } from '../../src/core/logger.js'
import type { AudioInSink } from '../../src/ports/audio.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

// Idle listening reads the microphone in 80 ms bursts, a session each 20 ms frame as it comes
// (src/audio/read-cadence.ts): a real arecord on a FIFO-backed PCM fed at the pace of real time.
const skip = missingCommands('arecord', 'mkfifo')
const FRAME = 640

/** `n` frames, frame k (from 1) filled with the 16-bit value k: order and loss are visible. */
function numbered(n: number): Uint8Array {
  const out = Buffer.alloc(n * FRAME)
  for (let k = 0; k < n; k++) {
    for (let o = 0; o < FRAME; o += 2) out.writeUInt16LE(k + 1, k * FRAME + o)
  }
  return out
}

/**
 * What reaches a sink: every frame's first sample, and how many frames each read handed on
 * (frames handed on in one synchronous run are one read: a microtask closes it).
 */
function recorder(marks: number[] = []) {
  const reads: number[] = []
  let open = false
  const sink: AudioInSink = {
    frame: (pcm) => {
      marks.push((pcm[0] as number) | ((pcm[1] as number) << 8))
      if (!open) {
        open = true
        reads.push(0)
        queueMicrotask(() => {
          open = false
        })
      }
      reads[reads.length - 1] = (reads.at(-1) as number) + 1
    },
    error: () => {},
  }
  return { sink, marks, reads }
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0
/** Frames per read over a stretch of reads. */
const perRead = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

/** Frames 1..n appear once each, in order, with nothing between them. */
function expectWhole(marks: readonly number[], n: number) {
  const first = marks.indexOf(1)
  expect(first).toBeGreaterThanOrEqual(0)
  expect(marks.slice(first, first + n)).toEqual(Array.from({ length: n }, (_, k) => k + 1))
}

const stops: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s()
})

async function world() {
  const alsa = hermeticAlsa('fifo', { stall: false })
  const mic = new ArecordMic({
    device: alsa.capture,
    clock: realClock(),
    logger: silentLogger,
    env: alsa.env,
  })
  stops.push(() => mic.stop())
  const feeds = new RoomFeeds([alsa.infile])
  feeds.start()
  stops.push(() => feeds.stop())
  return { mic, feeds }
}

describe.skipIf(skip)('the microphone read in bursts while idle (real arecord)', () => {
  it('idle: four frames a read, every frame in order; each as it comes after every(0)', async () => {
    const { mic, feeds } = await world()
    const r = recorder()
    mic.reads.every(80)
    await mic.start(r.sink)
    await until(() => feeds.heard(0, 200), 'feeds.heard(0, 200)', 60_000)
    const n = 150 // 3 s
    feeds.play(numbered(n), [{ i: 0 }])
    await until(() => r.marks.includes(75), 'r.marks.includes(75)', 60_000)
    const idleReads = r.reads.length
    mic.reads.every(0)
    await until(() => r.marks.includes(n), 'r.marks.includes(n)', 60_000)
    expectWhole(r.marks, n)
    // Loose on purpose: the feeding timer here is jittery, so a burst is sometimes read in two.
    expect(perRead(r.reads.slice(2, idleReads - 1))).toBeGreaterThanOrEqual(2)
    expect(median(r.reads.slice(idleReads + 2))).toBe(1)
  }, 20_000)

  it("a listener's longer bursts (320 ms, ending where it asks): 16 frames a read, every frame in order", async () => {
    const { mic, feeds } = await world()
    const r = recorder()
    mic.reads.every(80)
    let handed = 0
    const ends: number[] = []
    await mic.start({
      frame: (pcm, at) => {
        handed++
        // The wake-word detector's batch: 4 chunks, the next complete 6 frames from here.
        if (handed === 30) mic.reads.every(320, 120)
        r.sink.frame(pcm, at)
        queueMicrotask(() => ends.at(-1) !== handed && ends.push(handed))
      },
      error: () => {},
    })
    await until(() => feeds.heard(0, 100), 'feeds.heard(0, 100)', 60_000)
    const n = 200 // 4 s
    feeds.play(numbered(n), [{ i: 0 }])
    await until(() => r.marks.includes(n), 'r.marks.includes(n)', 60_000)
    expectWhole(r.marks, n)
    // Loose on purpose, as above: a jittery feed (this process's timer, under a loaded machine)
    // splits a burst now and then; every frame read as it comes would make it 1, at 80 ms 4.
    expect(perRead(r.reads.slice(4, -1))).toBeGreaterThanOrEqual(6)
    // Where the bursts end: 36, 52, 68, … — not on the old beat from the first frame (32, 48, …),
    // where they would all end without the listener's `nextMs`. A split burst's early read ends
    // anywhere between.
    const later = ends.filter((e) => e > 36)
    const asked = later.filter((e) => e % 16 === 4).length
    const old = later.filter((e) => e % 16 === 0).length
    expect(asked).toBeGreaterThanOrEqual(3)
    expect(asked).toBeGreaterThan(2 * old)
  }, 20_000)

  it("align(): the frame being handed on starts a burst, so reads end where a listener's chunks do", async () => {
    const { mic, feeds } = await world()
    mic.reads.every(80)
    let handed = 0
    const ends: number[] = [] // frames handed on when each read ended
    let open = false
    const aligned = 50 // 2 past a burst's end counted from the recorder's first frame
    await mic.start({
      frame: () => {
        handed++
        // The detector resets on this frame (a gap): its chunks now start here.
        if (handed === aligned) mic.reads.align()
        if (!open) {
          open = true
          queueMicrotask(() => {
            open = false
            ends.push(handed)
          })
        }
      },
      error: () => {},
    })
    await until(() => handed >= aligned + 100, 'handed >= aligned + 100', 60_000)
    const later = ends.filter((e) => e > aligned + 8)
    // A burst ends on its 4th frame from the aligned one: 53, 57, … (before: 52, 56, …).
    const onBeat = later.filter((e) => (e - aligned + 1) % 4 === 0).length
    expect(onBeat).toBeGreaterThan(later.length / 2)
    expect(feeds.heard(0, 1000)).toBe(true)
  }, 20_000)

  it('switching back and forth loses and reorders nothing', async () => {
    const { mic, feeds } = await world()
    const r = recorder()
    await mic.start(r.sink)
    await until(() => feeds.heard(0, 100), 'feeds.heard(0, 100)', 60_000)
    const n = 200
    feeds.play(numbered(n), [{ i: 0 }])
    // Every 70–130 ms a switch, wherever the bursts happen to be.
    for (let k = 0; !r.marks.includes(n); k++) {
      mic.reads.every(k % 2 === 0 ? 80 : 20)
      await new Promise((done) => setTimeout(done, 70 + ((k * 37) % 60)))
    }
    expectWhole(r.marks, n)
  }, 20_000)

  it('a session opening on the router reads each frame as it comes, at once; idle again after it', async () => {
    const { mic, feeds } = await world()
    const router = new MicRouter(
      { ...routed(mic), start: (s) => mic.start(s), stop: () => mic.stop() },
      { reads: mic.reads },
    )
    const all: number[] = []
    const idle = recorder(all)
    const session = recorder(all)
    await router.start(idle.sink)
    await until(() => feeds.heard(0, 100), 'feeds.heard(0, 100)', 60_000)
    const n = 250
    feeds.play(numbered(n), [{ i: 0 }])
    await until(() => idle.marks.includes(40), 'idle.marks.includes(40)', 60_000)
    const sessionMic = router.sessionMic()
    await sessionMic.start(session.sink)
    await until(() => session.marks.includes(100), 'session.marks.includes(100)', 60_000)
    await sessionMic.stop()
    const resumed = idle.reads.length
    await until(() => idle.marks.includes(n), 'idle.marks.includes(n)', 60_000)
    // One stream whoever got it: nothing lost or reordered at either switch.
    expectWhole(all, n)
    expect(session.marks.length).toBeGreaterThan(0)
    expect(perRead(idle.reads.slice(2, 8))).toBeGreaterThanOrEqual(2)
    expect(median(session.reads.slice(1))).toBe(1)
    // Every idle read after the switch back (~150 frames), not the last few: the feeding timer
    // here is jittery under load, so a burst is sometimes read in two, and 7 reads once averaged
    // 1.86 frames in CI. Over ~35 bursts the mean is near 4 whatever the jitter; each frame read
    // as it comes would make it 1.
    expect(perRead(idle.reads.slice(resumed + 1, -1))).toBeGreaterThanOrEqual(2)
  }, 20_000)
})

/** The router's source needs mute and an echo gate; this test's mic has neither. */
function routed(mic: ArecordMic) {
  return { sampleRateHz: mic.sampleRateHz, setMuted: () => {} }
}
