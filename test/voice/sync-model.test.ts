import { describe, expect, it } from 'vitest'
import { settle, voiceFixture } from './harness.js'

describe('voice: a model without asynchronous calls (docs/design.md §2.11)', () => {
  it('warns at session start, declares tools blocking, emits the waiting event, answers once with no interim', async () => {
    const v = voiceFixture({ capabilities: { model: 'sync-live', asyncToolCalls: false } })
    const { conn } = await v.start()
    expect(conn.setup.nonBlockingTools).toBe(false)
    const warn = v.log.withEvent('approvals_dead_air')
    expect(warn).toHaveLength(2) // at startup, and at session start
    for (const w of warn) expect(w).toMatchObject({ level: 'warn', fields: { model: 'sync-live' } })
    expect(warn[1]?.fields).toHaveProperty('conversation')
    conn.user('Unlock the front door.')
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    await settle()
    expect(conn.responses).toEqual([]) // a blocking call takes its first response as the answer
    expect(v.waiting).toEqual([
      {
        callId: 'c1',
        approvalId: v.approver.last().request.id,
        tool: 'unlock_door',
        action: 'unlock the front door',
        audience: "Anna's phone",
      },
    ])
    expect(v.driver.state).toBe('waiting_for_approval')
    await v.clock.advance(15_000)
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(conn.responses).toEqual([
      { id: 'c1', name: 'unlock_door', response: { output: { unlocked: 'front' } } },
    ])
    expect(v.driver.state).toBe('listening')
  })

  it('an async model declares every tool non-blocking and logs why', async () => {
    const v = voiceFixture({ capabilities: { model: 'async-live', asyncToolCalls: true } })
    const { conn } = await v.start()
    expect(conn.setup.nonBlockingTools).toBe(true)
    expect(conn.setup.tools.map((t) => t.name)).toEqual([
      'unlock_door',
      'set_light',
      'current_time',
    ])
    expect(v.log.withEvent('voice_tools_declared')[0]?.fields).toMatchObject({
      nonBlocking: true,
      why: 'the model supports asynchronous calls',
    })
    expect(v.log.withEvent('approvals_dead_air')).toEqual([])
  })
})
