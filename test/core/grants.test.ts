import { describe, expect, it } from 'vitest'
import { digestOf } from '../../src/core/canonical.js'
import { rememberedGrant } from '../../src/core/grants.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { coreFixture } from '../helpers/core.js'

function lightTool(runs: unknown[], over: Partial<Tool<{ room: string; level: number }>> = {}) {
  const tool: Tool<{ room: string; level: number }> = {
    name: 'set_light',
    description: 'Dim a light',
    parameters: {
      type: 'object',
      properties: { room: { type: 'string' }, level: { type: 'integer' } },
      required: ['room', 'level'],
    },
    describe: (a) => `set the ${a.room} light to ${a.level}%`,
    call: async (_ctx, a) => {
      runs.push(a)
      return 'ok'
    },
    ...over,
  }
  return tool as Tool
}

/** Runs one call, answering the phone with `answer` if it is asked. Returns whether it asked. */
async function callOnce(
  f: ReturnType<typeof coreFixture>,
  tools: ToolSet,
  args: unknown,
  over: Parameters<ReturnType<typeof coreFixture>['ctx']>[0] = {},
  answer: unknown = { decision: 'approve', by: 'phone-a' },
) {
  const before = f.approver.asked.length
  const p = tools.call(f.ctx(over), 'set_light', args)
  await settle()
  const asked = f.approver.asked.length > before
  if (asked) f.approver.last().answer(answer)
  return { asked, outcome: await p }
}

describe('grants', () => {
  it('once: the next identical call asks again, and nothing is stored', async () => {
    const f = coreFixture()
    const tools = new ToolSet([lightTool([])])
    const args = { room: 'hall', level: 40 }
    expect(
      (await callOnce(f, tools, args, {}, { decision: 'approve', grant: 'once', by: 'p' })).asked,
    ).toBe(true)
    expect((await callOnce(f, tools, args)).asked).toBe(true)
    expect(f.grants.list()).toEqual([])
  })

  it('session: covers the same arguments in the same conversation and channel only', async () => {
    const f = coreFixture()
    const runs: unknown[] = []
    const tools = new ToolSet([lightTool(runs)])
    const args = { room: 'hall', level: 40 }
    await callOnce(f, tools, args, {}, { decision: 'approve', grant: 'session', by: 'phone-a' })
    const [g] = f.grants.list()
    expect(g).toMatchObject({
      tool: 'set_light',
      channel: 'voice',
      scope: { kind: 'exact', argsDigest: digestOf(args) },
      expiry: { kind: 'session', conversationId: 'conv-1' },
      createdBy: { kind: 'phone', id: 'phone-a' },
    })
    // Same args, key order shuffled: the digest is canonical, so no phone is asked.
    expect((await callOnce(f, tools, { level: 40, room: 'hall' })).asked).toBe(false)
    // Different arguments: asked.
    expect((await callOnce(f, tools, { room: 'hall', level: 41 })).asked).toBe(true)
    // Another conversation: asked.
    expect((await callOnce(f, tools, args, { conversationId: 'conv-2' })).asked).toBe(true)
    expect(runs).toHaveLength(4)
  })

  it('a call a grant allows is told on (onCovered, for the History) with the grant and when; an asked one is not', async () => {
    const f = coreFixture()
    const tools = new ToolSet([lightTool([])])
    const args = { room: 'hall', level: 40 }
    await callOnce(f, tools, args, {}, { decision: 'approve', grant: 'session', by: 'phone-a' })
    expect(f.covered).toEqual([])
    await f.clock.advance(5_000)
    // Other arguments: asked, so not covered.
    expect((await callOnce(f, tools, { room: 'hall', level: 41 })).asked).toBe(true)
    expect(f.covered).toEqual([])
    expect((await callOnce(f, tools, args, { askedBy: 'ben', said: 'Dim the hall' })).asked).toBe(
      false,
    )
    expect(f.covered).toEqual([
      {
        tool: 'set_light',
        action: 'set the hall light to 40%',
        args,
        critical: false,
        channel: 'voice',
        conversationId: 'conv-1',
        askedBy: 'ben',
        said: 'Dim the hall',
        grant: f.grants.list()[0],
        at: f.clock.now(),
      },
    ])
  })

  it('is per channel: a yes for text does not open the voice door', async () => {
    const f = coreFixture({ policies: { set_light: { text: 'ask' } } })
    const tools = new ToolSet([lightTool([])])
    const args = { room: 'hall', level: 40 }
    await callOnce(
      f,
      tools,
      args,
      { channel: 'text' },
      { decision: 'approve', grant: 'session', by: 'p' },
    )
    expect((await callOnce(f, tools, args, { channel: 'text' })).asked).toBe(false)
    expect((await callOnce(f, tools, args, { channel: 'voice' })).asked).toBe(true)
  })

  it('until: covers calls until the time, then asks again', async () => {
    const f = coreFixture()
    const tools = new ToolSet([lightTool([])])
    const args = { room: 'hall', level: 40 }
    const until = f.clock.now() + 3_600_000
    await callOnce(f, tools, args, {}, { decision: 'approve', grant: { until }, by: 'p' })
    expect((await callOnce(f, tools, args, { conversationId: 'later' })).asked).toBe(false)
    await f.clock.advance(3_600_000)
    expect((await callOnce(f, tools, args, { conversationId: 'later' })).asked).toBe(true)
  })

  it('a declared pattern covers every call matching it', async () => {
    const f = coreFixture()
    const tools = new ToolSet([lightTool([], { grantPattern: (a) => ({ room: a.room }) })])
    await callOnce(
      f,
      tools,
      { room: 'hall', level: 40 },
      {},
      { decision: 'approve', grant: 'session', by: 'p' },
    )
    expect(f.grants.list()[0]?.scope).toEqual({ kind: 'pattern', pattern: { room: 'hall' } })
    expect((await callOnce(f, tools, { room: 'hall', level: 90 })).asked).toBe(false)
    expect((await callOnce(f, tools, { room: 'kitchen', level: 40 })).asked).toBe(true)
  })

  it('revoked grants stop covering at once', async () => {
    const f = coreFixture()
    const tools = new ToolSet([lightTool([])])
    const args = { room: 'hall', level: 40 }
    await callOnce(f, tools, args, {}, { decision: 'approve', grant: 'session', by: 'p' })
    const [g] = f.grants.list()
    expect(f.grants.revoke(g!.id, f.clock.now())).toBe(true)
    expect(f.grants.revoke(g!.id, f.clock.now())).toBe(false)
    expect(f.grants.list()[0]?.revokedAt).toBe(f.clock.now())
    expect((await callOnce(f, tools, args)).asked).toBe(true)
  })

  it('are never created from voice', () => {
    const f = coreFixture()
    expect(() =>
      f.grants.add(
        {
          tool: 'set_light',
          channel: 'voice',
          scope: { kind: 'exact', argsDigest: 'x' },
          expiry: { kind: 'session', conversationId: 'c' },
          createdBy: { kind: 'voice', id: 'someone in the room' },
          createdAt: 0,
        },
        { critical: false },
      ),
    ).toThrow(/never from speech/)
    expect(f.grants.list()).toEqual([])
  })

  it('an allowed voice call creates no grant', async () => {
    const f = coreFixture({ policies: { set_light: { voice: 'allow' } } })
    await callOnce(f, new ToolSet([lightTool([])]), { room: 'hall', level: 1 })
    expect(f.grants.list()).toEqual([])
  })

  it('a critical tool asks every time: a "session" yes is not remembered either', async () => {
    const f = coreFixture()
    const tools = new ToolSet([lightTool([], { critical: true })])
    const args = { room: 'hall', level: 40 }
    const first = await callOnce(
      f,
      tools,
      args,
      {},
      { decision: 'approve', grant: 'session', by: 'p' },
    )
    expect(first.outcome.ok).toBe(true)
    expect(f.grants.list()).toEqual([])
    expect((await callOnce(f, tools, args)).asked).toBe(true)
    expect(rememberedGrant(true, 'session')).toBe('once')
    expect(rememberedGrant(false, 'session')).toBe('session')
    expect(rememberedGrant(false, { until: 5 })).toEqual({ until: 5 })
    expect(() =>
      f.grants.add(
        {
          tool: 'set_light',
          channel: 'voice',
          scope: { kind: 'exact', argsDigest: 'x' },
          expiry: { kind: 'session', conversationId: 'c' },
          createdBy: { kind: 'phone', id: 'p' },
          createdAt: 0,
        },
        { critical: true },
      ),
    ).toThrow(/critical/)
  })

  it('a critical tool never gets "until": the yes counts once', async () => {
    const f = coreFixture()
    const tools = new ToolSet([lightTool([], { critical: true })])
    const args = { room: 'hall', level: 40 }
    const until = f.clock.now() + 3_600_000
    const first = await callOnce(
      f,
      tools,
      args,
      {},
      { decision: 'approve', grant: { until }, by: 'p' },
    )
    expect(first.outcome.ok).toBe(true)
    expect(f.grants.list()).toEqual([])
    expect((await callOnce(f, tools, args)).asked).toBe(true)
    expect(() =>
      f.grants.add(
        {
          tool: 'set_light',
          channel: 'voice',
          scope: { kind: 'exact', argsDigest: 'x' },
          expiry: { kind: 'until', at: until },
          createdBy: { kind: 'phone', id: 'p' },
          createdAt: 0,
        },
        { critical: true },
      ),
    ).toThrow(/critical/)
  })
})
