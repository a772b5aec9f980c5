import { describe, expect, it } from 'vitest'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

describe('FakeSpeaker: a virtual playout clock', () => {
  it('plays in real time by the clock, reports played and queued, and a drop discards the rest', async () => {
    const clock = new VirtualClock()
    const s = new FakeSpeaker(clock, { keepAudio: true })
    s.write(new Uint8Array(48 * 1000).fill(1)) // 1 s at 24 kHz
    expect(s.queuedMs()).toBe(1000)
    await clock.advance(250)
    expect(s.playedMs()).toBe(250)
    expect(s.queuedMs()).toBe(750)
    s.write(new Uint8Array(48 * 500).fill(2)) // appended: plays after the first
    await clock.advance(1000)
    expect(s.playedMs()).toBe(1250)
    expect(s.drop()).toEqual({ discardedMs: 250, playedMs: 1250 })
    expect(s.playedMs()).toBe(0)
    await clock.advance(1000)
    expect(s.playedBytes()).toBe(48 * 1250)
    const audio = s.audio()
    expect(audio.filter((b) => b === 2).length).toBe(48 * 250)
  })

  it('after an underrun, new audio starts playing when it is written', async () => {
    const clock = new VirtualClock()
    const s = new FakeSpeaker(clock)
    s.write(new Uint8Array(48 * 100))
    await clock.advance(1000)
    s.write(new Uint8Array(48 * 100))
    expect(s.queuedMs()).toBe(100)
    await clock.advance(50)
    expect(s.queuedMs()).toBe(50)
    expect(s.played.map((p) => p.startedAt - clock.now())).toEqual([-1050, -50])
    await clock.advance(10)
    s.queuedMs()
    await clock.advance(10)
    s.queuedMs()
    expect(s.played).toHaveLength(2) // contiguous pieces of one stretch merge
    expect(s.played[1]?.bytes).toBe(48 * 70)
  })
})
