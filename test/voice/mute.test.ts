import { describe, expect, it } from 'vitest'
import { settle, voiceFixture } from './harness.js'

describe('voice: mute from the panel (docs/design.md §5, §6)', () => {
  it('mute during model speech: no microphone audio leaves, the stream is ended, playback and session carry on', async () => {
    const v = voiceFixture()
    const { conn, done } = await v.start()
    v.source.speak(5)
    expect(conn.audioFrames).toBe(5)
    conn.model('Here is the news.')
    conn.audio(2000)
    expect(v.driver.state).toBe('speaking')
    v.driver.setMuted(true)
    expect(v.driver.state).toBe('muted')
    expect(conn.sent.at(-1)).toEqual({ kind: 'endAudio' })
    v.source.speak(50)
    expect(conn.audioFrames).toBe(5)
    await v.clock.advance(1000)
    expect(v.speaker.playedBytes()).toBe(1000 * 48) // the reply keeps playing
    conn.turnComplete()
    await v.clock.advance(1000)
    expect(v.driver.state).toBe('muted') // muted wins over everything
    expect(conn.closed).toBe(false)
    v.driver.setMuted(false)
    expect(v.driver.state).toBe('listening')
    v.source.speak(1)
    expect(conn.audioFrames).toBe(6)
    const raced = await Promise.race([done, Promise.resolve('still running')])
    expect(raced).toBe('still running')
    expect(v.states).toEqual(['listening', 'speaking', 'muted', 'listening'])
  })

  it('mute during user speech: frames stop mid-utterance, the words said so far are kept', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    v.source.speak(10)
    conn.user('Turn on the')
    v.driver.setMuted(true)
    v.source.speak(10)
    expect(conn.audioFrames).toBe(10)
    expect(conn.sent.filter((s) => s.kind === 'endAudio')).toHaveLength(1)
    await v.clock.advance(5000)
    expect(conn.closed).toBe(false)
    await v.driver.stop()
    expect(v.chat()).toEqual(['user: Turn on the'])
  })

  it('a session opened while muted sends no microphone audio, pre-roll included', async () => {
    const v = voiceFixture()
    v.driver.setMuted(true)
    const { conn } = await v.start({ preRoll: [new Uint8Array(640).fill(3)] })
    v.source.speak(3)
    expect(conn.audioFrames).toBe(0)
    expect(v.driver.state).toBe('muted')
  })

  it('pre-roll goes first, before live frames', async () => {
    const v = voiceFixture()
    const { conn } = await v.start({
      preRoll: [new Uint8Array(640).fill(3), new Uint8Array(640).fill(3)],
    })
    expect(conn.audioFrames).toBe(2)
    v.source.speak(1)
    expect(conn.audioFrames).toBe(3)
  })

  it('echo mode gate: while the speaker plays, the microphone sends silence, not nothing', async () => {
    const v = voiceFixture({ echo: 'gate' })
    const { conn } = await v.start()
    v.source.speak(1)
    expect(conn.lastAudio?.some((b) => b !== 0)).toBe(true)
    conn.audio(1000)
    v.source.speak(1)
    expect(conn.audioFrames).toBe(2)
    expect(conn.lastAudio?.every((b) => b === 0)).toBe(true)
    await v.clock.advance(1300) // playback plus the tail
    v.source.speak(1)
    expect(conn.lastAudio?.some((b) => b !== 0)).toBe(true)
  })

  it('echo mode aec: the microphone stays open while the speaker plays', async () => {
    const v = voiceFixture({ echo: 'aec' })
    const { conn } = await v.start()
    conn.audio(1000)
    v.source.speak(1)
    expect(conn.lastAudio?.some((b) => b !== 0)).toBe(true)
    await settle()
  })
})
