import { describe, expect, it } from 'vitest'
import { settle, voiceFixture } from './harness.js'

describe('voice: connection lifetime (docs/design.md §2.10)', () => {
  it('goAway with an approval pending: waits for the turn to end, closes the old socket first, resumes without history, delivers the result on the new connection', async () => {
    const v = voiceFixture()
    const { conn: first } = await v.start()
    first.handle('h-1')
    first.user('Unlock the front door.')
    first.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    first.model('I have asked Anna.')
    first.audio(1000)
    first.goAway(30_000)
    await settle()
    expect(v.llm.connections).toHaveLength(1) // not mid-reply
    first.handle('h-2') // the newest resumable handle wins
    first.handle('', false) // "not resumable right now" does not erase it
    first.turnComplete()
    await settle()
    expect(v.llm.connections).toHaveLength(2)
    const second = v.llm.current
    expect(first.closedBy).toBe('client')
    expect(second.setup.resumeHandle).toBe('h-2')
    expect(second.setup.history).toBeUndefined()
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(first.responses.map((r) => r.willContinue)).toEqual([true])
    expect(second.responses).toEqual([
      {
        id: 'c1',
        name: 'unlock_door',
        response: { output: { unlocked: 'front' } },
        scheduling: 'INTERRUPT',
        willContinue: false,
      },
    ])
    expect(v.log.withEvent('connection_resumed')).toHaveLength(1)
  })

  it('the old socket is closed — handshake finished — before the resuming open starts', async () => {
    const v = voiceFixture({ closeLatencyMs: 200 })
    const closedWhenOpening: boolean[] = []
    const { conn: first } = await v.start()
    const open = v.llm.open.bind(v.llm)
    v.llm.open = (setup, events) => {
      closedWhenOpening.push(first.closed)
      return open(setup, events)
    }
    first.handle('h-1')
    first.goAway(20_000) // idle between turns: resume at once
    await v.clock.advance(199)
    expect(first.closing).toBe(true)
    expect(closedWhenOpening).toEqual([])
    await v.clock.advance(1)
    expect(closedWhenOpening).toEqual([true])
    expect(v.llm.current).not.toBe(first)
  })

  it('a result finished during the reconnect gap is queued and delivered after resumption', async () => {
    const v = voiceFixture({ openLatencyMs: 1000 })
    const started = v.driver.runSession()
    await v.clock.advance(1000)
    const first = v.llm.current
    first.handle('h-1')
    first.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    first.turnComplete()
    first.handle('h-2') // a handle that has seen the call
    await settle()
    first.goAway(10_000)
    await settle()
    expect(first.closed).toBe(true) // the gap has begun: the new connection takes 1 s to open
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await v.clock.advance(999)
    expect(v.llm.connections).toHaveLength(1)
    await v.clock.advance(1)
    const second = v.llm.current
    expect(second).not.toBe(first)
    expect(second.responses.map((r) => [r.id, r.willContinue, r.scheduling])).toEqual([
      ['c1', false, 'INTERRUPT'],
    ])
    expect(first.responses.map((r) => r.willContinue)).toEqual([true])
    await v.driver.stop()
    await started
  })

  it('a call newer than the last resumption handle is unknown to the resumed session: withdrawn, never answered there', async () => {
    const v = voiceFixture()
    const { conn: first } = await v.start()
    first.handle('h-1')
    first.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    first.turnComplete()
    await settle()
    const asked = v.approver.last()
    first.goAway(10_000) // no handle arrived after the call
    await settle()
    const second = v.llm.current
    expect(second.setup.resumeHandle).toBe('h-1')
    expect(asked.withdrawn).toBe(true)
    asked.answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(second.responses).toEqual([])
    expect(v.unlocked).toEqual([])
    expect(
      v.log.withEvent('call_orphaned').filter((r) => r.fields.cause === 'newer_than_handle'),
    ).toHaveLength(1)
  })

  it('events the resumed connection delivers while it opens (a new handle, a new call) do not orphan the calls it knows', async () => {
    let opened = 0
    const v = voiceFixture({
      onOpen: (conn) => {
        if (++opened !== 2) return
        conn.handle('h-3') // before open() has resolved
        conn.toolCall({ id: 'c2', name: 'set_light', args: { room: 'hall' } })
      },
    })
    const { conn: first } = await v.start()
    first.handle('h-1')
    first.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    first.handle('h-2')
    first.toolCall({ id: 'c3', name: 'set_light', args: { room: 'kitchen' } }) // after h-2
    first.turnComplete()
    await settle()
    first.goAway(10_000)
    await settle()
    const second = v.llm.current
    expect(second.setup.resumeHandle).toBe('h-2')
    // c1 is known to the resumed session, c3 is not (newer than h-2), c2 was made on it.
    expect(v.approver.asked.map((a) => [a.request.args, a.withdrawn])).toEqual([
      [{ door: 'front' }, false],
      [{ room: 'kitchen' }, true],
      [{ room: 'hall' }, false],
    ])
    for (const a of v.approver.asked) a.answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(second.responses.map((r) => [r.id, r.willContinue])).toEqual([
      ['c2', true],
      ['c1', false],
      ['c2', false],
    ])
  })

  it('a connection lost with no way to resume: a fresh connection with the history; the old call is withdrawn and never answered', async () => {
    const v = voiceFixture({ capabilities: { resumption: false } })
    const { conn: first } = await v.start()
    first.user('Unlock the front door.')
    first.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    await settle()
    const asked = v.approver.last()
    first.drop(1011, 'internal error')
    await settle()
    const second = v.llm.current
    expect(second).not.toBe(first)
    expect(second.setup.resumeHandle).toBeUndefined()
    expect(second.setup.history?.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(asked.withdrawn).toBe(true) // nobody on the new connection asked for this
    asked.answer({ decision: 'approve', by: 'phone-a' })
    await v.clock.advance(60_000)
    expect(v.unlocked).toEqual([])
    expect(first.responses.map((r) => r.willContinue)).toEqual([true])
    expect(second.responses).toEqual([])
    expect(v.log.withEvent('call_orphaned')[0]?.fields).toMatchObject({ callId: 'c1' })
  })

  it('a resumption the provider refuses falls back to a fresh connection, and the old call is not answered there', async () => {
    const v = voiceFixture({
      failOpen: (setup) => (setup.resumeHandle ? new Error('handle expired') : undefined),
    })
    const { conn: first } = await v.start()
    first.handle('h-1')
    first.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    await settle()
    first.drop(1006, 'abnormal closure')
    await settle()
    expect(v.llm.opens.map((s) => s.resumeHandle ?? null)).toEqual([null, 'h-1', null])
    const second = v.llm.current
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(second.responses).toEqual([])
    expect(v.unlocked).toEqual([])
  })

  it('a connection that cannot be reopened: fresh attempts with backoff between them, then the session ends in error at once', async () => {
    const v = voiceFixture({
      options: { maxReconnectAttempts: 3 },
      failOpen: (_setup, attempt) => (attempt > 1 ? new Error('ECONNREFUSED') : undefined),
    })
    const { conn: first, done } = await v.start()
    const droppedAt = v.clock.now()
    first.drop(1006, 'abnormal closure')
    await v.clock.advance(10_000)
    const summary = await done
    expect(summary.reason).toBe('error')
    expect(v.llm.opens).toHaveLength(4) // the first, then three fresh attempts
    // Backoff of 1 s and 2 s between the three attempts; no third wait before giving up.
    expect(summary.endedAt - droppedAt).toBe(3000)
  })

  it('events from a connection after it was replaced are ignored', async () => {
    const v = voiceFixture()
    const { conn: first } = await v.start()
    first.handle('h-1')
    first.goAway(20_000)
    await settle()
    const second = v.llm.current
    first.audio(1000)
    first.toolCall({ id: 'late', name: 'current_time', args: {} })
    await settle()
    expect(v.speaker.writtenBytes).toBe(0)
    expect(second.responses).toEqual([])
    expect(v.driver.state).toBe('listening')
  })

  it('microphone audio during the gap is kept (bounded) and sent after resumption', async () => {
    const v = voiceFixture({ openLatencyMs: 500, options: { gapBufferMs: 100 } })
    const started = v.driver.runSession()
    await settle() // the microphone is running; the connection is still opening
    v.source.speak(10) // 200 ms while the first connection opens: only the last 100 ms are kept
    await v.clock.advance(500)
    expect(v.llm.current.audioFrames).toBe(5)
    v.source.speak(2)
    expect(v.llm.current.audioFrames).toBe(7)
    // The frames themselves, in order: the microphone lent one buffer for all twelve.
    expect(v.llm.current.audioMarks).toEqual([12, 13, 14, 15, 16, 17, 18])
    await v.driver.stop()
    await started
  })
})
