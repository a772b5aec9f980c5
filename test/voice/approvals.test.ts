import { describe, expect, it } from 'vitest'
import { settle, voiceFixture } from './harness.js'

const interim = (id: string, name: string, action: string) => ({
  id,
  name,
  response: { status: 'waiting_for_approval', approver: "Anna's phone", action },
  willContinue: true,
  scheduling: 'WHEN_IDLE',
})

describe('voice: a gated call answered by a phone (docs/design.md §2.3, §2.4, §2.5)', () => {
  it('approval while the user still waits: the interim result at once, then the final with INTERRUPT', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Unlock the front door.')
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    await settle()
    // Answered at once, naming what is pending and on whose phone — and nothing injected.
    expect(conn.responses).toEqual([interim('c1', 'unlock_door', 'unlock the front door')])
    expect(conn.sent.filter((s) => s.kind !== 'audio')).toHaveLength(1)
    conn.model('I have asked Anna to confirm on her phone.')
    conn.audio(1500)
    conn.turnComplete()
    await v.clock.advance(20_000)
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(v.unlocked).toEqual(['front'])
    expect(conn.responses).toEqual([
      interim('c1', 'unlock_door', 'unlock the front door'),
      {
        id: 'c1',
        name: 'unlock_door',
        response: { output: { unlocked: 'front' } },
        scheduling: 'INTERRUPT',
        willContinue: false,
      },
    ])
    expect(v.log.withEvent('final_answer')[0]?.fields).toMatchObject({
      callId: 'c1',
      scheduling: 'INTERRUPT',
      turnsSince: 0,
    })
  })

  for (const decision of ['approve', 'deny'] as const) {
    it(`${decision}: the user moved on (a new turn started) before the phone answered → WHEN_IDLE`, async () => {
      const v = voiceFixture()
      const { conn } = await v.start()
      conn.user('Unlock the front door.')
      conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
      conn.model('I have asked Anna.')
      conn.turnComplete()
      await settle()
      conn.user('What is the weather like?') // the next exchange begins
      conn.model('Sunny all day.')
      conn.turnComplete()
      await v.clock.advance(30_000)
      v.approver.last().answer({ decision, by: 'phone-a' })
      await settle()
      const final = conn.responses.at(-1)
      expect(conn.responses).toHaveLength(2)
      expect(final).toMatchObject({ id: 'c1', scheduling: 'WHEN_IDLE', willContinue: false })
      if (decision === 'deny') {
        expect(final?.response).toEqual({
          error: "Anna's phone said no to: unlock the front door.",
          code: 'NOC_ERR_DENIED_BY_HUMAN',
        })
        expect(v.unlocked).toEqual([])
      } else expect(final?.response).toEqual({ output: { unlocked: 'front' } })
    })
  }

  it('a denial the user is still waiting for interrupts: the outcome never decides scheduling', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Unlock the back door.')
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'back' } })
    conn.turnComplete()
    await settle()
    v.approver.last().answer({ decision: 'deny', by: 'phone-a' })
    await settle()
    expect(conn.responses.at(-1)).toMatchObject({
      id: 'c1',
      response: { error: "Anna's phone said no to: unlock the back door." },
      scheduling: 'INTERRUPT',
    })
  })

  it('two gated calls pending at once, answered in the opposite order: one final each, by id', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('Unlock the front door and switch on the hall light.')
    conn.toolCall(
      { id: 'c1', name: 'unlock_door', args: { door: 'front' } },
      { id: 'c2', name: 'set_light', args: { room: 'hall' } },
    )
    conn.turnComplete()
    await settle()
    expect(v.approver.asked).toHaveLength(2)
    const [door, light] = v.approver.asked
    light?.answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    door?.answer({ decision: 'deny', by: 'phone-a' })
    await settle()
    expect(conn.responses.map((r) => [r.id, r.willContinue, r.scheduling])).toEqual([
      ['c1', true, 'WHEN_IDLE'],
      ['c2', true, 'WHEN_IDLE'],
      ['c2', false, 'INTERRUPT'],
      ['c1', false, 'INTERRUPT'],
    ])
    expect(conn.responses[2]?.response).toEqual({ output: { on: 'hall' } })
    expect(conn.responses[3]?.response).toMatchObject({ error: expect.stringContaining('said no') })
    expect(v.lights).toEqual(['hall'])
    expect(v.unlocked).toEqual([])
  })

  it('a fast ungated tool is answered while a gated one still waits', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.user('What time is it, and unlock the front door.')
    conn.toolCall(
      { id: 'c1', name: 'unlock_door', args: { door: 'front' } },
      { id: 'c2', name: 'current_time', args: {} },
    )
    await settle()
    expect(conn.responses.map((r) => [r.id, r.willContinue ?? null, r.scheduling])).toEqual([
      ['c1', true, 'WHEN_IDLE'],
      ['c2', null, 'INTERRUPT'],
    ])
    expect(conn.responses[1]?.response).toEqual({ output: { time: '12:00' } })
    expect(v.approver.last().withdrawn).toBe(false) // the gated call is still waiting
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(conn.responses.filter((r) => r.id === 'c1' && !r.willContinue)).toHaveLength(1)
  })

  it('the LED shows waiting_for_approval while a phone decides, and listening after', async () => {
    const v = voiceFixture()
    const { conn } = await v.start()
    conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    await settle()
    expect(v.driver.state).toBe('waiting_for_approval')
    conn.audio(1000)
    expect(v.driver.state).toBe('speaking') // speech wins over waiting while it plays
    await v.clock.advance(1000)
    expect(v.driver.state).toBe('waiting_for_approval')
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(v.driver.state).toBe('listening')
    expect(v.states).toEqual([
      'listening',
      'waiting_for_approval',
      'speaking',
      'waiting_for_approval',
      'listening',
    ])
  })
})

describe('voice: every call not withdrawn gets exactly one final answer (DESIGN §2.5)', () => {
  const cases: [string, (v: ReturnType<typeof voiceFixture>) => Promise<void>, string, string][] = [
    [
      'nobody answers in time',
      async (v) => v.clock.advance(120_000),
      "Nobody answered on Anna's phone in time, so I did not unlock the front door.",
      'NOC_ERR_APPROVAL_TIMEOUT',
    ],
    [
      'the broker is down',
      async (v) => v.approver.last().fail(new Error('ECONNREFUSED')),
      "I can't reach Anna's phone right now, so I did not unlock the front door.",
      'NOC_ERR_APPROVER_UNREACHABLE',
    ],
  ]
  for (const [name, act, error, code] of cases) {
    it(`${name}: one final error answer the model can say`, async () => {
      const v = voiceFixture()
      const { conn } = await v.start()
      conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
      await settle()
      await act(v)
      await v.clock.advance(200_000)
      expect(conn.responses.filter((r) => !r.willContinue)).toEqual([
        {
          id: 'c1',
          name: 'unlock_door',
          response: { error, code },
          scheduling: 'INTERRUPT',
          willContinue: false,
        },
      ])
    })
  }

  it('a tool that throws: one final error answer', async () => {
    const v = voiceFixture({
      tools: [
        {
          name: 'flaky',
          description: 'fails',
          parameters: { type: 'object', properties: {} },
          policy: { voice: 'allow' },
          call: async () => {
            throw new Error('the hub did not answer')
          },
        },
      ],
    })
    const { conn } = await v.start()
    conn.toolCall({ id: 'c1', name: 'flaky', args: {} })
    await settle()
    expect(conn.responses).toEqual([
      {
        id: 'c1',
        name: 'flaky',
        response: { error: 'flaky failed on the speaker.', code: 'NOC_ERR_TOOL_FAILED' },
        scheduling: 'INTERRUPT',
      },
    ])
  })
})
