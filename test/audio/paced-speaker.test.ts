import { describe, expect, it } from 'vitest'
import { PacedSpeaker } from '../../src/audio/paced-speaker.js'
import type { SpeakerDevice } from '../../src/audio/speaker-device.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

/** A device that records what it was handed and when. */
class RecordingDevice implements SpeakerDevice {
  fed = 0
  silenced = 0
  ended = 0
  readonly log: { at: number; bytes: number }[] = []
  constructor(readonly clock: VirtualClock) {}
  write(pcm: Uint8Array) {
    this.fed += pcm.byteLength
    this.log.push({ at: this.clock.now(), bytes: pcm.byteLength })
  }
  silence() {
    this.silenced++
  }
  endOfAudio() {
    this.ended++
  }
  async close() {}
}

const RATE = 24_000
const ms = (n: number) => (RATE * 2 * n) / 1000

function setup(leadMs = 20, tickMs = 10, quietEndMs?: number) {
  const clock = new VirtualClock()
  const device = new RecordingDevice(clock)
  const speaker = new PacedSpeaker({
    device,
    sampleRateHz: RATE,
    clock,
    leadMs,
    tickMs,
    quietEndMs,
  })
  return { clock, device, speaker, t0: clock.now() }
}

describe('PacedSpeaker (virtual clock)', () => {
  it('hands the device only the lead ahead of real time, however fast audio arrives', async () => {
    const s = setup()
    for (let i = 0; i < 50; i++) s.speaker.write(new Uint8Array(ms(100))) // 5 s at once
    expect(s.device.fed).toBe(ms(20))
    for (const t of [10, 250, 1000, 3330]) {
      await s.clock.advance(t - (s.clock.now() - s.t0))
      // Never more than lead + one tick ahead of the play position.
      expect(s.device.fed).toBeGreaterThanOrEqual(ms(t))
      expect(s.device.fed).toBeLessThanOrEqual(ms(t + 20))
      expect(s.speaker.playedMs()).toBe(t)
      expect(s.speaker.queuedMs()).toBe(5000 - t)
    }
  })

  it('played = written − still queued, and the run ends (with endOfAudio) when all has played', async () => {
    const s = setup()
    s.speaker.write(new Uint8Array(ms(300)))
    await s.clock.advance(120)
    expect(s.speaker.playedMs() + s.speaker.queuedMs()).toBe(300)
    await s.clock.advance(400)
    expect(s.speaker.playedMs()).toBe(300)
    expect(s.speaker.queuedMs()).toBe(0)
    expect(s.device.ended).toBe(1)
    expect(s.clock.pending).toBe(0) // idle costs no timers
  })

  it('drop: discards the rest, silences the device once, and counts from zero again', async () => {
    const s = setup()
    s.speaker.write(new Uint8Array(ms(5000)))
    await s.clock.advance(1000)
    expect(s.speaker.drop()).toEqual({ discardedMs: 4000, playedMs: 1000 })
    expect(s.device.silenced).toBe(1)
    const fedAtDrop = s.device.fed
    await s.clock.advance(1000)
    expect(s.device.fed).toBe(fedAtDrop)
    expect(s.speaker.playedMs()).toBe(0)
    expect(s.speaker.queuedMs()).toBe(0)
    // A drop with nothing playing does not disturb the (already fresh) device.
    expect(s.speaker.drop()).toEqual({ discardedMs: 0, playedMs: 0 })
    expect(s.device.silenced).toBe(1)
  })

  it('the next reply after a drop starts at once: its lead is fed in the same turn', async () => {
    const s = setup()
    s.speaker.write(new Uint8Array(ms(1000)))
    await s.clock.advance(500)
    s.speaker.drop()
    const before = s.device.fed
    s.speaker.write(new Uint8Array(ms(1000)))
    expect(s.device.fed - before).toBe(ms(20))
  })

  it('a gap in the stream (late model audio) restarts timing from when audio resumes', async () => {
    const s = setup()
    s.speaker.write(new Uint8Array(ms(100)))
    await s.clock.advance(500)
    expect(s.speaker.playedMs()).toBe(100)
    s.speaker.write(new Uint8Array(ms(100)))
    await s.clock.advance(50)
    expect(s.speaker.playedMs()).toBe(150)
    expect(s.speaker.queuedMs()).toBe(50)
  })

  it('the end of a reply, once the model says so, reaches the device as soon as its last byte does', async () => {
    const s = setup(200)
    s.speaker.write(new Uint8Array(ms(1000)))
    s.speaker.endOfReply()
    // 800 ms still in Nocturn's queue: padding now would land in the middle of the reply.
    expect(s.device.ended).toBe(0)
    await s.clock.advance(790)
    expect(s.device.ended).toBe(0)
    await s.clock.advance(20)
    // The last byte went out with ~200 ms still to play, and the end with it.
    expect(s.device.fed).toBe(ms(1000))
    expect(s.device.ended).toBe(1)
    await s.clock.advance(300)
    expect(s.device.ended).toBe(1) // once per reply, not again when the run ends
  })

  it('with everything already handed over, the end of the reply reaches the device at once', async () => {
    const s = setup(500)
    s.speaker.write(new Uint8Array(ms(130)))
    expect(s.device.ended).toBe(0)
    s.speaker.endOfReply()
    expect(s.device.ended).toBe(1)
    // Audio after it needs its own end, sent with its last byte at the next tick.
    s.speaker.write(new Uint8Array(ms(50)))
    s.speaker.endOfReply()
    await s.clock.advance(10)
    expect(s.device.fed).toBe(ms(180))
    expect(s.device.ended).toBe(2)
  })

  it('without word from the model, the end goes once writes stop for 200 ms, not when the run ends', async () => {
    const s = setup(1000) // tick 10 ms
    // A reply streamed as a model does, faster than it plays: 100 ms chunks 25 ms apart.
    for (let i = 0; i < 5; i++) {
      s.speaker.write(new Uint8Array(ms(100)))
      await s.clock.advance(25)
      expect(s.device.ended).toBe(0) // mid-reply: no padding between chunks
    }
    await s.clock.advance(165)
    expect(s.device.ended).toBe(0)
    await s.clock.advance(20)
    // 200 ms after the last chunk, with 190 ms of the reply still to play: its end is out.
    expect(s.device.ended).toBe(1)
    expect(s.speaker.queuedMs()).toBeGreaterThan(150)
    // Audio after it is another reply's, with an end of its own; the run's end adds none.
    s.speaker.write(new Uint8Array(ms(100)))
    await s.clock.advance(210)
    expect(s.device.ended).toBe(2)
    await s.clock.advance(500)
    expect(s.device.ended).toBe(2)
    expect(s.clock.pending).toBe(0)
  })

  it('without word from the model and a chunk late, the end still goes when the run ends', async () => {
    const s = setup(500, 10, 1000)
    s.speaker.write(new Uint8Array(ms(300)))
    await s.clock.advance(290)
    expect(s.device.ended).toBe(0) // 10 ms left: more audio may still come, and must not wait
    s.speaker.write(new Uint8Array(ms(100)))
    await s.clock.advance(100)
    expect(s.device.ended).toBe(0)
    await s.clock.advance(20)
    expect(s.device.ended).toBe(1) // all 400 ms played: the run is over
  })

  it("a reply's first chunks reach the device as they come, not at the next tick", async () => {
    const { clock, device, speaker } = setup(500, 100)
    speaker.write(new Uint8Array(ms(100)))
    await clock.advance(50)
    speaker.write(new Uint8Array(ms(100)))
    // Handed over at once: waiting for the tick at 100 ms, the device would have run dry.
    expect(device.fed).toBe(ms(200))
    expect(device.log.map((l) => l.at - device.log[0]!.at)).toEqual([0, 50])
    // And no extra timers: one tick keeps going, as before.
    expect(clock.pending).toBe(1)
  })

  it('once the device has the whole reply, it wakes only when the device should be done: the run ends on time', async () => {
    const { clock, device, speaker } = setup(1000, 250)
    let wakes = 0
    const setTimer = clock.setTimeout.bind(clock)
    clock.setTimeout = (fn, delay) =>
      setTimer(() => {
        wakes++
        fn()
      }, delay)
    speaker.write(new Uint8Array(ms(1500)))
    expect(device.fed).toBe(ms(1000))
    await clock.advance(250)
    // While Nocturn still holds some of it: a look every tick, keeping the lead.
    expect(device.fed).toBe(ms(1250))
    await clock.advance(250)
    expect(device.fed).toBe(ms(1500))
    expect(wakes).toBe(2)
    // All of it is in the device, 1000 ms of it unplayed: no look until then, not one a tick.
    // Nothing written for 500 ms: the reply's end went with its last byte.
    expect(device.ended).toBe(1)
    await clock.advance(999)
    expect(wakes).toBe(2)
    await clock.advance(1)
    expect(device.ended).toBe(1) // once: not again when the run ends
    expect(speaker.playedMs()).toBe(1500)
    expect(wakes).toBe(3)
    expect(clock.pending).toBe(0)
  })

  it('honours a configurable lead', async () => {
    const s = setup(60)
    s.speaker.write(new Uint8Array(ms(1000)))
    expect(s.device.fed).toBe(ms(60))
  })
})

describe('PacedSpeaker: time and a hung device', () => {
  it('plays on when the wall clock steps back mid-reply: pacing runs on the monotonic clock', async () => {
    const s = setup()
    s.speaker.write(new Uint8Array(ms(2000)))
    await s.clock.advance(500)
    // NTP (or a user) sets the time back an hour, then forward a day, mid-reply.
    s.clock.stepWall(-3_600_000)
    expect(s.speaker.playedMs()).toBe(500)
    await s.clock.advance(500)
    s.clock.stepWall(86_400_000)
    expect(s.speaker.playedMs()).toBe(1000)
    expect(s.device.fed).toBe(ms(1020))
    await s.clock.advance(1100)
    // Every byte went out, at the pace of the reply, and the run ended normally.
    expect(s.device.fed).toBe(ms(2000))
    expect(s.speaker.playedMs()).toBe(2000)
    expect(s.device.ended).toBe(1)
  })

  it('a device that stops taking audio is silenced (replaced) once, and the reply plays on', async () => {
    const clock = new VirtualClock()
    const device = new RecordingDevice(clock)
    let taken = 0
    let hung = false
    Object.assign(device, {
      progress: () => {
        if (!hung) taken = device.fed
        return taken
      },
      silence: () => {
        device.silenced++
        hung = false
      },
    })
    const speaker = new PacedSpeaker({ device, sampleRateHz: RATE, clock, stallMs: 500 })
    speaker.write(new Uint8Array(ms(5000)))
    await clock.advance(1000)
    expect(device.silenced).toBe(0)
    hung = true
    await clock.advance(400)
    expect(device.silenced).toBe(0)
    await clock.advance(200)
    expect(device.silenced).toBe(1)
    const fedAtReplace = device.fed
    await clock.advance(1000)
    // The fresh device is fed on from the play position, not from where the hung one stopped.
    expect(device.fed - fedAtReplace).toBeGreaterThanOrEqual(ms(960))
    expect(device.silenced).toBe(1)
    // Waiting between replies with everything taken is not a stall.
    await clock.advance(10_000)
    speaker.write(new Uint8Array(ms(100)))
    await clock.advance(1000)
    expect(device.silenced).toBe(1)
  })
})
