import { describe, expect, it } from 'vitest'
import { isNocturnError, NocturnError } from '../../src/core/errors.js'
import { MAX_ARGS_BYTES, ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import { coreFixture } from '../helpers/core.js'

const timer: Tool<{ minutes: number; label?: string }> = {
  name: 'set_timer',
  description: 'Set a timer',
  parameters: {
    type: 'object',
    properties: {
      minutes: { type: 'integer', minimum: 1, maximum: 1440 },
      label: { type: 'string', maxLength: 40 },
    },
    required: ['minutes'],
    additionalProperties: false,
  },
  policy: { voice: 'allow', text: 'allow' },
  call: async (_ctx, a) => ({ set: a.minutes }),
}

describe('ToolSet', () => {
  const tools = new ToolSet([timer as Tool])

  it('declares name, description and parameters', () => {
    expect(tools.declarations()).toEqual([
      { name: 'set_timer', description: 'Set a timer', parameters: timer.parameters },
    ])
  })

  it('runs a valid call', async () => {
    const f = coreFixture()
    expect(await tools.call(f.ctx(), 'set_timer', { minutes: 5 })).toEqual({
      ok: true,
      value: { set: 5 },
    })
  })

  it('an unknown tool is an error result naming it', async () => {
    const f = coreFixture()
    expect(await tools.call(f.ctx(), 'launch_rockets', {})).toEqual({
      ok: false,
      code: 'NOC_ERR_UNKNOWN_TOOL',
      error: 'There is no tool called "launch_rockets".',
    })
  })

  const bad: [string, unknown, RegExp][] = [
    [
      'a string for an integer',
      { minutes: 'five' },
      /args\.minutes: expected an integer, got string/,
    ],
    ['a fraction for an integer', { minutes: 1.5 }, /args\.minutes: expected an integer/],
    ['a missing required key', {}, /args\.minutes: required/],
    ['an extra key', { minutes: 1, rocket: true }, /args\.rocket: not allowed/],
    ['out of range', { minutes: 0 }, /args\.minutes: below 1/],
    ['an array for the object', [1], /args: expected an object, got an array/],
    ['a too long string', { minutes: 1, label: 'x'.repeat(41) }, /args\.label: longer than 40/],
  ]
  for (const [name, args, message] of bad) {
    it(`invalid arguments (${name}) are an error result, and the tool does not run`, async () => {
      const f = coreFixture()
      const out = await tools.call(f.ctx(), 'set_timer', args)
      expect(out).toMatchObject({ ok: false, code: 'NOC_ERR_INVALID_ARGS' })
      expect(out.ok === false && out.error).toMatch(message)
    })
  }

  it('huge arguments are refused before validation', async () => {
    const f = coreFixture()
    const out = await tools.call(f.ctx(), 'set_timer', {
      minutes: 1,
      label: 'x'.repeat(MAX_ARGS_BYTES),
    })
    expect(out).toMatchObject({ ok: false, code: 'NOC_ERR_ARGS_TOO_LARGE' })
  })

  it('a tool that throws is an error result, not an exception; what it said stays in the log', async () => {
    const f = coreFixture()
    const broken = new ToolSet([
      {
        ...timer,
        name: 'broken',
        call: async () => Promise.reject(new Error('disk full at /var/lib/nocturn/secret.db')),
      } as Tool,
    ])
    expect(await broken.call(f.ctx(), 'broken', { minutes: 1 })).toEqual({
      ok: false,
      code: 'NOC_ERR_TOOL_FAILED',
      error: 'broken failed on the speaker.',
    })
  })

  it('a system error with a string code is not a Nocturn error: no path, no foreign code', async () => {
    const f = coreFixture()
    const sys = Object.assign(new Error("ENOENT: no such file, open '/home/anna/.key'"), {
      code: 'ENOENT',
    })
    expect(isNocturnError(sys)).toBe(false)
    expect(
      isNocturnError(Object.assign(new Error('x'), { name: 'NocturnError', code: 'EPERM' })),
    ).toBe(false)
    expect(isNocturnError(new NocturnError('NOC_ERR_BROKER_REFUSED', 'no'))).toBe(true)
    const broken = new ToolSet([
      { ...timer, name: 'broken', call: async () => Promise.reject(sys) } as Tool,
    ])
    const out = await broken.call(f.ctx(), 'broken', { minutes: 1 })
    expect(out).toEqual({
      ok: false,
      code: 'NOC_ERR_TOOL_FAILED',
      error: 'broken failed on the speaker.',
    })
    expect(JSON.stringify(out)).not.toContain('/home/anna')
  })

  it('refuses two tools with one name', () => {
    expect(() => new ToolSet([timer as Tool, timer as Tool])).toThrow(/duplicate tool name/)
  })
})
