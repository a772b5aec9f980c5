import { describe, expect, it } from 'vitest'
import { MicGate } from '../../src/audio/mic-gate.js'
import { FakeMic } from '../../src/testing/fake-mic.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

class ScriptedMic extends FakeMic {
  /** A 20 ms frame whose samples are all `value`. */
  emit(value: number, at: number) {
    const pcm = new Uint8Array(640)
    new DataView(pcm.buffer).setInt16(0, value, true)
    pcm.fill(value & 0xff, 2)
    this.sink?.frame(pcm, at)
  }
}

function setup(echo: 'gate' | 'aec') {
  const clock = new VirtualClock()
  const mic = new ScriptedMic()
  const speaker = {
    queued: 0,
    queuedMs() {
      return this.queued
    },
  }
  const gate = new MicGate({ source: mic, speaker, clock, echo, tailMs: 300 })
  const out: Uint8Array[] = []
  return {
    clock,
    mic,
    speaker,
    gate,
    out,
    start: () => gate.start({ frame: (p) => out.push(p.slice()), error: () => {} }),
  }
}

const silent = (b: Uint8Array) => b.every((x) => x === 0)

describe('MicGate', () => {
  it('passes frames through when nothing plays', async () => {
    const s = setup('gate')
    await s.start()
    s.mic.emit(1000, 0)
    expect(s.out).toHaveLength(1)
    expect(silent(s.out[0]!)).toBe(false)
  })

  it('gate: silence (same length) while the speaker plays and for the tail, then the room again', async () => {
    const s = setup('gate')
    await s.start()
    s.speaker.queued = 500
    s.mic.emit(1000, 0)
    s.speaker.queued = 0
    await s.clock.advance(299)
    s.mic.emit(1000, 0)
    await s.clock.advance(1)
    s.mic.emit(1000, 0)
    expect(s.out.map((b) => [b.byteLength, silent(b)])).toEqual([
      [640, true],
      [640, true],
      [640, false],
    ])
  })

  it('aec: the microphone stays open while the speaker plays', async () => {
    const s = setup('aec')
    await s.start()
    s.speaker.queued = 500
    s.mic.emit(1000, 0)
    expect(silent(s.out[0]!)).toBe(false)
  })

  it('mute: no frame leaves at all, in either mode, until unmuted', async () => {
    for (const mode of ['gate', 'aec'] as const) {
      const s = setup(mode)
      await s.start()
      s.gate.setMuted(true)
      s.mic.emit(1000, 0)
      s.speaker.queued = 100
      s.mic.emit(1000, 0)
      expect(s.out).toEqual([])
      s.gate.setMuted(false)
      s.speaker.queued = 0
      await s.clock.advance(1000)
      s.mic.emit(1000, 0)
      expect(s.out).toHaveLength(1)
    }
  })
})
