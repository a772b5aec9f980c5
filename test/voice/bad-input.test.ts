import { describe, expect, it } from 'vitest'
import type { LiveToolCall } from '../../src/ports/live-llm.js'
import { latchTool, settle, voiceFixture } from './harness.js'

describe('voice: provider events out of order or duplicated are logged, never a crash, never a second answer', () => {
  it('turnComplete twice: the second starts nothing and ends nothing', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Unlock the front door.')
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    conn.turnComplete()
    conn.turnComplete()
    await settle()
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(conn.responses.at(-1)).toMatchObject({ id: 'c1', scheduling: 'INTERRUPT' })
    expect(v.log.withEvent('turn_complete_without_turn')).toHaveLength(1)
  })

  it('a cancellation for an unknown id, and for a call already answered: logged, nothing else', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.toolCall({ id: 'c1', name: 'current_time', args: {} })
    await settle()
    conn.cancel('nope', 'c1')
    await settle()
    expect(conn.responses.map((r) => r.id)).toEqual(['c1'])
    expect(v.log.withEvent('stray_cancellation').map((r) => r.fields.state)).toEqual([
      'unknown',
      'answered',
    ])
  })

  it('a tool call with an id already in flight (or answered) is ignored: the tool runs once, one final answer', async () => {
    const slow = latchTool('slow', { voice: 'allow' })
    const v = voiceFixture({ tools: [slow.tool] })
    const { conn } = await v.start()
    conn.toolCall({ id: 'c1', name: 'slow', args: {} })
    conn.toolCall({ id: 'c1', name: 'slow', args: {} })
    conn.toolCall({ id: 'c2', name: 'slow', args: {} }, { id: 'c2', name: 'slow', args: {} })
    await settle()
    expect(slow.state.started).toBe(2)
    slow.release('done')
    await settle()
    conn.toolCall({ id: 'c1', name: 'slow', args: {} }) // after it was answered
    await settle()
    expect(conn.responses.map((r) => r.id)).toEqual(['c1', 'c2'])
    expect(slow.state.started).toBe(2)
    expect(v.log.withEvent('duplicate_call_id')).toHaveLength(3)
  })

  it('a tool call naming an unknown tool gets one error answer the model can say', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.toolCall({ id: 'c1', name: 'launch_rockets', args: {} })
    await settle()
    expect(conn.responses).toEqual([
      {
        id: 'c1',
        name: 'launch_rockets',
        response: {
          error: 'There is no tool called "launch_rockets".',
          code: 'NOC_ERR_UNKNOWN_TOOL',
        },
        scheduling: 'INTERRUPT',
      },
    ])
  })

  it('garbage in a tool call (no id, no name, null) is logged and skipped', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.events.toolCall([
      { id: '', name: 'current_time', args: {} },
      null as unknown as LiveToolCall,
      { id: 'c9', name: undefined as unknown as string, args: undefined },
    ])
    conn.events.toolCallCancellation(null as unknown as string[])
    await settle()
    expect(conn.responses.map((r) => [r.id, r.name])).toEqual([['c9', 'undefined']])
    expect(v.log.withEvent('call_without_id')).toHaveLength(2)
  })

  it('audio, tool calls and turns after the session closed are ignored', async () => {
    const v = voiceFixture()
    const { conn, done } = await v.start()
    await v.driver.stop()
    await done
    conn.audio(1000)
    conn.user('hello?')
    conn.toolCall({ id: 'late', name: 'current_time', args: {} })
    conn.interrupted()
    conn.turnComplete()
    conn.goAway(1000)
    conn.drop()
    await v.clock.advance(5000)
    expect(v.speaker.writtenBytes).toBe(0)
    expect(v.speaker.drops).toEqual([])
    expect(conn.responses).toEqual([])
    expect(v.llm.connections).toHaveLength(1)
    expect(v.driver.state).toBe('idle')
  })

  it('a second session while one runs is refused; an unknown conversation is refused', async () => {
    const v = voiceFixture()
    await v.start()
    await expect(v.driver.runSession()).rejects.toThrow('already running')
    await v.driver.stop()
    await expect(v.driver.runSession({ conversationId: 'nope' })).rejects.toMatchObject({
      code: 'NOC_ERR_STORE_UNKNOWN_CONVERSATION',
    })
  })

  it('a microphone that will not start: the session ends with error and closes its connection', async () => {
    const v = voiceFixture()
    v.source.start = async () => {
      throw new Error('arecord: no such device')
    }
    const summary = await v.driver.runSession()
    expect(summary.reason).toBe('error')
    expect(v.llm.current.closedBy).toBe('client')
    expect(v.log.withEvent('mic_start_failed')).toHaveLength(1)
  })

  it('a provider that cannot be reached: the session ends with error, the LED says so', async () => {
    const v = voiceFixture({ failOpen: () => new Error('ECONNREFUSED') })
    const summary = await v.driver.runSession()
    expect(summary.reason).toBe('error')
    expect(v.driver.state).toBe('error')
  })
})
