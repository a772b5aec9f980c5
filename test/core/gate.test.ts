import { describe, expect, it } from 'vitest'
import { NocturnError } from '../../src/core/errors.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import type { ApprovalDecision, Approver } from '../../src/ports/approver.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { coreFixture } from '../helpers/core.js'

function doorTool(
  runs: unknown[],
  over: Partial<Tool<{ door: string }>> = {},
): Tool<{ door: string }> {
  return {
    name: 'unlock_door',
    description: 'Unlock a door',
    parameters: { type: 'object', properties: { door: { type: 'string' } }, required: ['door'] },
    describe: (a) => `unlock the ${a.door} door`,
    call: async (_ctx, a) => {
      runs.push(a)
      return { unlocked: a.door }
    },
    ...over,
  }
}

describe('gate: asking a human', () => {
  it('tells the driver who is asked and what, then runs the tool on a clear yes', async () => {
    const f = coreFixture()
    const runs: unknown[] = []
    const tools = new ToolSet([doorTool(runs) as Tool])
    const p = tools.call(f.ctx(), 'unlock_door', { door: 'front' })
    await settle()
    expect(f.pending).toEqual([
      {
        approvalId: f.approver.last().request.id,
        audience: "Anna's phone",
        tool: 'unlock_door',
        action: 'unlock the front door',
      },
    ])
    const req = f.approver.last().request
    expect(req).toMatchObject({
      tool: 'unlock_door',
      action: 'unlock the front door',
      channel: 'voice',
    })
    expect(req.argsDigest).toMatch(/^[0-9a-f]{64}$/)
    expect(req.expiresAt - req.createdAt).toBe(60_000)
    f.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    expect(await p).toEqual({ ok: true, value: { unlocked: 'front' } })
    expect(runs).toEqual([{ door: 'front' }])
    expect(f.approver.last().withdrawn).toBe(true) // settled requests are taken off every phone
  })

  it('a no from the phone is a denial the model can say', async () => {
    const f = coreFixture()
    const runs: unknown[] = []
    const p = new ToolSet([doorTool(runs) as Tool]).call(f.ctx(), 'unlock_door', { door: 'front' })
    await settle()
    f.approver.last().answer({ decision: 'deny', by: 'phone-a' })
    const out = await p
    expect(out).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
    expect(out.ok === false && out.error).toContain('unlock the front door')
    expect(runs).toEqual([])
  })
})

describe('gate: fails closed', () => {
  const garbage: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['a string', 'yes'],
    ['an unknown decision', { decision: 'maybe', by: 'phone-a' }],
    ['"Approve" in the wrong case', { decision: 'Approve', by: 'phone-a' }],
    ['approve with nobody named', { decision: 'approve' }],
  ]
  for (const [name, answer] of garbage) {
    it(`an answer that is ${name} is denied`, async () => {
      const f = coreFixture()
      const runs: unknown[] = []
      const p = new ToolSet([doorTool(runs) as Tool]).call(f.ctx(), 'unlock_door', { door: 'back' })
      await settle()
      f.approver.last().answer(answer)
      expect(await p).toMatchObject({ ok: false, code: 'NOC_ERR_APPROVAL_UNCLEAR' })
      expect(runs).toEqual([])
    })
  }

  it('an approver that throws is "cannot reach", and nothing runs', async () => {
    const throwing: Approver = {
      audience: 'your phones',
      request: async () => {
        throw new Error('broker down')
      },
    }
    const f = coreFixture({ approver: throwing })
    const runs: unknown[] = []
    const out = await new ToolSet([doorTool(runs) as Tool]).call(f.ctx(), 'unlock_door', {
      door: 'front',
    })
    expect(out).toMatchObject({ ok: false, code: 'NOC_ERR_APPROVER_UNREACHABLE' })
    expect(out.ok === false && out.error).toContain("can't reach your phones")
    expect(runs).toEqual([])
  })

  it('an approver that withdraws its requests (the speaker shutting down) cancels the call: no answer, no warning, nothing runs', async () => {
    const closing: Approver = {
      audience: 'your phones',
      request: async () => {
        throw new NocturnError('NOC_ERR_CANCELLED', 'the speaker is shutting down')
      },
    }
    const f = coreFixture({ approver: closing })
    const log = new MemoryLogger()
    const runs: unknown[] = []
    const out = await new ToolSet([doorTool(runs) as Tool]).call(
      f.ctx({ logger: log }),
      'unlock_door',
      { door: 'front' },
    )
    expect(out).toMatchObject({ ok: false, code: 'NOC_ERR_CANCELLED' })
    expect(runs).toEqual([])
    expect(log.records.filter((r) => r.level === 'warn' || r.level === 'error')).toEqual([])
  })

  it('no answer in time: withdrawn from the phone and denied', async () => {
    const f = coreFixture({ timeoutMs: 30_000 })
    const runs: unknown[] = []
    const p = new ToolSet([doorTool(runs) as Tool]).call(f.ctx(), 'unlock_door', { door: 'front' })
    await f.clock.advance(29_999)
    expect(f.approver.last().withdrawn).toBe(false)
    await f.clock.advance(1)
    expect(f.approver.last().withdrawn).toBe(true)
    // The approver keeps no deadline of its own: the abort's reason tells it the request expired.
    expect(f.approver.last().signal.reason).toMatchObject({ code: 'NOC_ERR_APPROVAL_TIMEOUT' })
    expect(await p).toMatchObject({ ok: false, code: 'NOC_ERR_APPROVAL_TIMEOUT' })
    // A yes that arrives after the deadline changes nothing.
    f.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    expect(runs).toEqual([])
  })

  it('an approver that ignores its signal still times out', async () => {
    const deaf: Approver = { audience: 'x', request: () => new Promise<ApprovalDecision>(() => {}) }
    const f = coreFixture({ approver: deaf, timeoutMs: 1000 })
    const p = new ToolSet([doorTool([]) as Tool]).call(f.ctx(), 'unlock_door', { door: 'front' })
    await f.clock.advance(1000)
    expect(await p).toMatchObject({ ok: false, code: 'NOC_ERR_APPROVAL_TIMEOUT' })
  })
})

/** A gated unlock asked on a fresh fixture, with the AbortController that can withdraw it. */
function abortableUnlock() {
  const f = coreFixture()
  const runs: unknown[] = []
  const call = new AbortController()
  const p = new ToolSet([doorTool(runs) as Tool]).call(
    f.ctx({ signal: call.signal }),
    'unlock_door',
    {
      door: 'front',
    },
  )
  return { f, runs, call, p }
}

describe('gate: withdrawal', () => {
  it('an aborted call unwinds the wait and withdraws the request; a later yes grants nothing', async () => {
    const { f, runs, call, p } = abortableUnlock()
    await settle()
    expect(f.approver.last().withdrawn).toBe(false)
    call.abort()
    expect(f.approver.last().withdrawn).toBe(true)
    expect(f.approver.last().signal.reason).not.toMatchObject({ code: 'NOC_ERR_APPROVAL_TIMEOUT' })
    expect(await p).toMatchObject({ ok: false, code: 'NOC_ERR_CANCELLED' })
    f.approver.last().answer({ decision: 'approve', grant: 'session', by: 'phone-a' })
    await settle()
    expect(runs).toEqual([])
    expect(f.grants.list()).toEqual([])
    expect(f.clock.pending).toBe(0) // the deadline timer was cleared
  })

  it('a decision racing the withdrawal in the same tick grants nothing', async () => {
    const { f, runs, call, p } = abortableUnlock()
    await settle()
    f.approver.last().answer({ decision: 'approve', grant: 'session', by: 'phone-a' })
    call.abort()
    expect(await p).toMatchObject({ ok: false, code: 'NOC_ERR_CANCELLED' })
    expect(runs).toEqual([])
    expect(f.grants.list()).toEqual([])
  })

  it('an already-aborted call never asks anyone', async () => {
    const f = coreFixture()
    const call = new AbortController()
    call.abort()
    const out = await new ToolSet([doorTool([]) as Tool]).call(
      f.ctx({ signal: call.signal }),
      'unlock_door',
      { door: 'front' },
    )
    expect(out).toMatchObject({ ok: false, code: 'NOC_ERR_CANCELLED' })
    expect(f.approver.asked).toHaveLength(0)
  })
})
