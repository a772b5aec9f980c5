import { describe, expect, it } from 'vitest'
import { doorTool, latchTool, settle, voiceFixture } from './harness.js'

describe('voice: a call the provider withdraws (docs/design.md §2.6)', () => {
  it('withdrawn while the approval is pending: approval taken off the phone, nothing sent, a later yes runs and grants nothing', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    await settle()
    const asked = v.approver.last()
    expect(asked.withdrawn).toBe(false)
    conn.cancel('c1')
    await settle()
    expect(asked.withdrawn).toBe(true)
    expect((asked.signal.reason as Error).message).toBe('call withdrawn')
    asked.answer({ decision: 'approve', grant: 'session', by: 'phone-a' })
    await v.clock.advance(60_000)
    expect(v.unlocked).toEqual([])
    expect(v.grants.list()).toEqual([])
    expect(conn.responses.map((r) => [r.id, r.willContinue])).toEqual([['c1', true]]) // the interim only
    expect(v.driver.state).toBe('listening')
    expect(v.log.withEvent('call_withdrawn')[0]?.fields).toMatchObject({
      callId: 'c1',
      reason: 'provider',
      approvalWithdrawn: asked.request.id,
    })
  })

  it('withdrawn in the same tick it was made: no phone is ever asked, nothing runs, nothing is sent', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.toolCall(
      { id: 'c1', name: 'unlock_door', args: { door: 'front' } },
      { id: 'c2', name: 'current_time', args: {} },
    )
    conn.cancel('c1', 'c2')
    await v.clock.advance(1000)
    expect(v.approver.asked).toEqual([])
    expect(v.unlocked).toEqual([])
    expect(conn.responses).toEqual([])
  })

  it('withdrawn while the tool already runs after approval: its signal aborts, and its result is not sent', async () => {
    const slow = latchTool('open_garage', { voice: 'ask' })
    const v = voiceFixture({ tools: [slow.tool] })
    const { conn } = await v.start()
    conn.toolCall({ id: 'c1', name: 'open_garage', args: {} })
    await settle()
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(slow.state.started).toBe(1)
    conn.cancel('c1')
    expect(slow.state.signal?.aborted).toBe(true)
    slow.release({ opened: true }) // this tool finishes anyway
    await settle()
    expect(conn.responses.map((r) => [r.id, r.willContinue])).toEqual([['c1', true]])
    const conversationId = v.conversationId()
    await v.driver.stop()
    // The chat says what really happened; the model was told nothing.
    expect(v.chat(conversationId)).toEqual([
      'assistant: [open_garage#c1]',
      'tool open_garage#c1: ok',
    ])
  })

  it('a withdrawal racing a decision in the same tick: no answer, approval withdrawn, nothing granted, nothing run', async () => {
    const unlocked: string[] = []
    const v = voiceFixture({ tools: [doorTool(unlocked)] })
    const { conn } = await v.start()
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'back' } })
    await settle()
    const asked = v.approver.last()
    asked.answer({ decision: 'approve', grant: 'session', by: 'phone-a' })
    conn.cancel('c1') // same tick: before the decision's continuation has run
    await v.clock.advance(10_000)
    expect(unlocked).toEqual([])
    expect(v.grants.list()).toEqual([])
    expect((asked.signal.reason as Error).message).toBe('call withdrawn')
    expect(conn.responses.filter((r) => !r.willContinue)).toEqual([])
    await v.driver.stop()
    expect(v.chat().at(-1)).toBe('tool unlock_door#c1: NOC_ERR_CANCELLED')
  })
})
