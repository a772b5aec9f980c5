import { describe, expect, it } from 'vitest'
import { settle, voiceFixture } from './harness.js'

describe('voice: budget and idle timeout (docs/design.md §2.9)', () => {
  it('the budget runs out with an approval pending: withdrawn, transcript complete, connection closed, LED idle', async () => {
    const v = voiceFixture({ options: { budgetMs: 60_000, idleMs: 3_600_000 } })
    const { conn, done } = await v.start()
    conn.user('Unlock the front door.')
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    conn.model('I have asked Anna.')
    await settle()
    const asked = v.approver.last()
    await v.clock.advance(59_999)
    expect(conn.closed).toBe(false)
    await v.clock.advance(1)
    const summary = await done
    expect(summary).toMatchObject({ reason: 'budget', calls: { answered: 0, withdrawn: 1 } })
    expect(summary.endedAt - summary.startedAt).toBe(60_000)
    expect(asked.withdrawn).toBe(true)
    expect((asked.signal.reason as Error).message).toBe('call withdrawn')
    expect(conn.closedBy).toBe('client')
    expect(conn.responses.filter((r) => !r.willContinue)).toEqual([]) // nothing after the interim
    expect(v.chat(summary.conversationId)).toEqual([
      'user: Unlock the front door.',
      'assistant: [unlock_door#c1]',
      'assistant: I have asked Anna.',
      'tool unlock_door#c1: NOC_ERR_CANCELLED',
    ])
    expect(v.driver.state).toBe('idle')
    expect(v.states.at(-1)).toBe('idle')
    // A phone answering afterwards changes nothing.
    asked.answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(v.unlocked).toEqual([])
  })

  it('idle: the session ends after the idle time with nobody speaking and nothing pending', async () => {
    const v = voiceFixture({ options: { idleMs: 10_000 } })
    const { conn, done } = await v.start()
    conn.user('What time is it?')
    conn.model('Seven.')
    conn.turnComplete()
    await v.clock.advance(6_000)
    conn.user('Hello?') // activity: the idle time starts again
    await v.clock.advance(9_999)
    expect(conn.closed).toBe(false)
    await v.clock.advance(1)
    const summary = await done
    expect(summary.reason).toBe('idle')
    expect(v.chat(summary.conversationId)).toEqual([
      'user: What time is it?',
      'assistant: Seven.',
      'user: Hello?',
    ])
  })

  it('idle runs only while the model can hear: a connection slower to open than the idle time is not a quiet room', async () => {
    // Someone spoke (that opened the session), but until the model can hear nobody can be heard
    // speaking: a slow board loading the SDK must not lose the session before it starts.
    const v = voiceFixture({ openLatencyMs: 15_000, options: { idleMs: 10_000 } })
    const done = v.driver.runSession()
    await v.clock.advance(15_000)
    const conn = v.llm.current
    await v.clock.advance(9_999)
    expect(conn.closed).toBe(false)
    await v.clock.advance(1)
    const summary = await done
    expect(summary.reason).toBe('idle')
    expect(summary.endedAt - summary.startedAt).toBe(25_000)
  })

  it('idle never withdraws an approval a phone is still deciding; once answered, the quiet time runs again', async () => {
    // Not docs/design.md §2.9's letter: a quiet room while Anna finds her phone is waiting,
    // not idleness. The gate's approval timeout bounds the wait, and the budget still ends all.
    const v = voiceFixture({ options: { idleMs: 10_000 } })
    const { conn, done } = await v.start()
    conn.user('Switch on the hall light.')
    conn.toolCall({ id: 'c1', name: 'set_light', args: { room: 'hall' } })
    conn.turnComplete()
    await settle()
    await v.clock.advance(45_000) // four and a half idle times of silence
    expect(conn.closed).toBe(false)
    expect(v.approver.last().withdrawn).toBe(false)
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    await v.clock.advance(9_999)
    expect(conn.closed).toBe(false)
    await v.clock.advance(10_001)
    const summary = await done
    expect(summary.reason).toBe('idle')
    expect(summary.calls).toEqual({ answered: 1, withdrawn: 0 })
  })

  it('idle does not cut the speaker off: the room is not idle while a reply still plays', async () => {
    const v = voiceFixture({ options: { idleMs: 10_000 } })
    const { conn, done } = await v.start()
    conn.model('A long answer.')
    conn.audio(15_000)
    conn.turnComplete()
    await v.clock.advance(14_999)
    expect(conn.closed).toBe(false)
    await v.clock.advance(1)
    expect((await done).reason).toBe('idle')
  })

  it('stop(): ends the running session cleanly on request', async () => {
    const v = voiceFixture()
    const { conn, done } = await v.start()
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'back' } })
    await settle()
    // Answering while it runs; from the moment it is ending a wake is not a barge-in on it any
    // more (the wake stage claims it like any other, so another speaker may take it).
    expect(v.driver.answering).toBe(true)
    const stopping = v.driver.stop()
    expect([v.driver.sessionRunning, v.driver.answering]).toEqual([true, false])
    const summary = await stopping
    expect(summary?.reason).toBe('stopped')
    expect(await done).toEqual(summary)
    expect(v.approver.last().withdrawn).toBe(true)
    expect(v.driver.sessionRunning).toBe(false)
  })
})
