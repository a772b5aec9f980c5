import { describe, expect, it } from 'vitest'
import { policyFor } from '../../src/core/policy.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Channel, Policy, Tool } from '../../src/core/types.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { coreFixture } from '../helpers/core.js'

function recordingTool(runs: string[], extra: Partial<Tool> = {}): Tool {
  return {
    name: 'lights',
    description: 'Switch the lights',
    parameters: { type: 'object', properties: { on: { type: 'boolean' } } },
    describe: () => 'switch the lights',
    call: async (ctx) => {
      runs.push(ctx.channel)
      return { done: true }
    },
    ...extra,
  }
}

const channels: Channel[] = ['voice', 'text']
const policies: Policy[] = ['allow', 'ask', 'deny']

describe('policy × channel', () => {
  for (const channel of channels) {
    for (const policy of policies) {
      it(`${policy} on ${channel}`, async () => {
        const other: Channel = channel === 'voice' ? 'text' : 'voice'
        // The other channel gets a different policy, to prove the lookup is per channel.
        const f = coreFixture({
          policies: {
            lights: { [channel]: policy, [other]: policy === 'deny' ? 'allow' : 'deny' },
          },
        })
        const runs: string[] = []
        const tools = new ToolSet([recordingTool(runs)])
        const result = tools.call(f.ctx({ channel }), 'lights', { on: true })
        await settle()
        if (policy === 'ask') {
          expect(f.approver.asked).toHaveLength(1)
          expect(f.approver.last().request.channel).toBe(channel)
          expect(runs).toEqual([])
          f.approver.last().answer({ decision: 'approve', by: 'phone-a' })
        }
        const outcome = await result
        if (policy === 'deny') {
          expect(outcome).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_POLICY' })
          expect(runs).toEqual([])
          expect(f.approver.asked).toHaveLength(0)
        } else {
          expect(outcome).toEqual({ ok: true, value: { done: true } })
          expect(runs).toEqual([channel])
        }
        if (policy === 'allow') expect(f.approver.asked).toHaveLength(0)
      })
    }
  }

  it('defaults are stricter for voice than for text', () => {
    const tool = recordingTool([])
    expect(policyFor(tool, 'voice')).toBe('ask')
    expect(policyFor(tool, 'text')).toBe('allow')
  })

  it("a tool's own default is used unless config overrides it", () => {
    const tool = recordingTool([], { policy: { voice: 'deny' } })
    expect(policyFor(tool, 'voice')).toBe('deny')
    expect(policyFor(tool, 'voice', { lights: { voice: 'ask' } })).toBe('ask')
  })

  it('a critical tool is never allowed without asking, whatever config says', () => {
    const tool = recordingTool([], { critical: true })
    expect(policyFor(tool, 'text')).toBe('ask')
    expect(policyFor(tool, 'voice', { lights: { voice: 'allow' } })).toBe('ask')
    expect(policyFor(tool, 'text', { lights: { text: 'deny' } })).toBe('deny')
  })
})
