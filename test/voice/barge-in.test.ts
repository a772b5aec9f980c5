import { describe, expect, it } from 'vitest'
import { settle, voiceFixture } from './harness.js'

describe('voice: barge-in (docs/design.md §2.7, §2.8)', () => {
  it('3 s of model audio buffered: dropped at once, nothing plays after, the user is kept, the cut reply is not, tools carry on', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Unlock the front door, and tell me a story.')
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    conn.model('I have asked Anna. Once upon a time there was a very long story')
    conn.audio(3000)
    await v.clock.advance(500)
    const playedBefore = v.speaker.playedBytes()
    expect(playedBefore).toBe(500 * 48) // 24 kHz, 16-bit: 48 bytes a millisecond
    conn.user('Stop. What time is it?')
    conn.interrupted()
    expect(v.speaker.drops).toHaveLength(1) // at once, not on a later tick
    expect(v.speaker.drops[0]).toMatchObject({ discardedMs: 2500, playedMs: 500 })
    // The provider is told, at once, what the room heard of the cut reply (for its own record).
    expect(conn.cuts).toEqual([{ discardedMs: 2500, playedMs: 500 }])
    conn.turnComplete()
    await v.clock.advance(5000)
    expect(v.speaker.playedBytes()).toBe(playedBefore) // not one byte played after the drop
    expect(v.driver.state).toBe('waiting_for_approval')
    // The call made before the barge-in was not cancelled by it.
    expect(v.approver.last().withdrawn).toBe(false)
    conn.model('It is noon.')
    conn.audio(400)
    conn.turnComplete()
    await settle()
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    // A turn started since the call (the barge-in): the answer waits for a gap.
    expect(conn.responses.at(-1)).toMatchObject({ id: 'c1', scheduling: 'WHEN_IDLE' })
    await v.driver.stop()
    expect(v.chat()).toEqual([
      'user: Unlock the front door, and tell me a story.',
      'assistant: [unlock_door#c1]',
      'user: Stop. What time is it?',
      'assistant: It is noon.',
      'tool unlock_door#c1: ok',
    ])
  })

  it('the words of a barge-in start a new turn at once: an answer landing before the model replies waits for a gap', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Unlock the front door.')
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    conn.model('I have asked Anna, and while we wait')
    conn.audio(2000)
    conn.interrupted() // the turn is over here, even before its turnComplete
    conn.user('Actually, what is the weather?')
    await settle()
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(conn.responses.at(-1)).toMatchObject({ id: 'c1', scheduling: 'WHEN_IDLE' })
  })

  it('transcription of the cut reply arriving after interrupted is not kept; the next reply is', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Tell me a story.')
    conn.model('Once upon a time')
    conn.audio(2000)
    conn.user('No, the weather.')
    conn.interrupted()
    conn.model(' there was a dragon.') // late: transcripts are not ordered against the audio
    conn.turnComplete()
    conn.model('Sunny')
    conn.audio(300)
    conn.model(' all day.')
    conn.turnComplete()
    await v.driver.stop()
    expect(v.chat()).toEqual([
      'user: Tell me a story.',
      'user: No, the weather.',
      'assistant: Sunny all day.',
    ])
  })

  it('the stop button drops playback without muting, cancels nothing, and the rest of that reply stays silent', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Tell me a story.')
    conn.model('Once upon a time')
    conn.audio(2000)
    await v.clock.advance(300)
    v.driver.stopSpeaking()
    expect(v.speaker.drops[0]).toMatchObject({ playedMs: 300, discardedMs: 1700 })
    expect(conn.cuts).toEqual([{ playedMs: 300, discardedMs: 1700 }])
    conn.audio(1000) // the model is still generating this reply
    conn.model(' there was a dragon.')
    await v.clock.advance(2000)
    expect(v.speaker.playedBytes()).toBe(300 * 48)
    expect(v.driver.muted).toBe(false)
    conn.turnComplete()
    conn.user('Thanks.')
    conn.model('You are welcome.')
    conn.audio(500)
    conn.turnComplete()
    await v.clock.advance(500)
    expect(v.speaker.playedBytes()).toBe(800 * 48) // the next reply plays again
    await v.driver.stop()
    expect(v.chat()).toEqual([
      'user: Tell me a story.',
      'user: Thanks.',
      'assistant: You are welcome.',
    ])
  })

  // The model's audio arrives faster than it plays: a long answer's turn is complete while the
  // room has heard only its start. A drop then (the long press, the wake phrase over it) must not
  // leave the unheard answer in the chat.
  it('a complete reply still playing when the stop button drops it is not kept; one played out is', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Tell me a story.')
    conn.model('Once upon a time there was a dragon.')
    conn.audio(3000)
    conn.turnComplete()
    await v.clock.advance(800)
    expect(v.chat()).toEqual(['user: Tell me a story.']) // not heard yet
    v.driver.stopSpeaking()
    expect(v.speaker.drops[0]).toMatchObject({ playedMs: 800, discardedMs: 2200 })
    conn.user('What time is it?')
    conn.model('It is noon.')
    conn.audio(500)
    conn.turnComplete()
    await v.clock.advance(600) // played out
    expect(v.driver.state).toBe('listening') // the LED too, not at the dropped reply's end
    expect(v.chat()).toEqual([
      'user: Tell me a story.',
      'user: What time is it?',
      'assistant: It is noon.',
    ])
    v.driver.stopSpeaking() // nothing left to drop: what was heard stays
    await v.driver.stop()
    expect(v.chat()).toHaveLength(3)
  })

  it('a reply still playing when the next question is answered is kept, before that question', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('What time is it?')
    conn.model('It is noon.')
    conn.audio(2000)
    conn.turnComplete()
    conn.user('And the weather?') // said over the end of the answer
    conn.model('Sunny.')
    conn.audio(500)
    conn.turnComplete()
    await v.driver.stop() // ends while "Sunny." is still queued: what the model said is kept
    expect(v.chat()).toEqual([
      'user: What time is it?',
      'assistant: It is noon.',
      'user: And the weather?',
      'assistant: Sunny.',
    ])
  })
})
