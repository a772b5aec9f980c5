import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import { lastToolResults, ScriptedLLM } from '../../src/testing/scripted-llm.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { TurnLoop } from '../../src/turn/turn-loop.js'
import { coreFixture } from '../helpers/core.js'

/** A tool that resolves when the test says so, to observe concurrency. */
function latchTool(name: string, started: string[], policy: Tool['policy'] = { text: 'allow' }) {
  let release!: () => void
  const gate = new Promise<void>((r) => {
    release = r
  })
  const tool: Tool = {
    name,
    description: name,
    parameters: { type: 'object', properties: {} },
    policy,
    call: async () => {
      started.push(name)
      await gate
      return `${name} done`
    },
  }
  return { tool, release }
}

function setup(
  tools: Tool[],
  steps: ConstructorParameters<typeof ScriptedLLM>[0],
  maxSteps?: number,
) {
  const f = coreFixture()
  const llm = new ScriptedLLM(steps)
  const loop = new TurnLoop({
    llm,
    tools: new ToolSet(tools),
    gate: f.gate,
    store: f.store,
    persona: defaultPersona,
    clock: f.clock,
    logger: silentLogger,
    maxSteps,
  })
  const conv = f.store.createConversation({ channel: 'text', at: f.clock.now() })
  return { f, llm, loop, conv }
}

describe('turn loop', () => {
  it('runs tool calls concurrently and feeds every outcome back', async () => {
    const started: string[] = []
    const a = latchTool('a', started)
    const b = latchTool('b', started)
    const { f, llm, loop, conv } = setup(
      [a.tool, b.tool],
      [
        {
          text: '',
          toolCalls: [
            { id: '1', name: 'a', args: {} },
            { id: '2', name: 'b', args: {} },
          ],
        },
        (req) => ({
          text: lastToolResults(req.history)
            .map((r) => r.toolName)
            .join('+'),
          toolCalls: [],
        }),
      ],
    )
    const run = loop.run({ conversationId: conv.id, text: 'do both', channel: 'text' })
    await settle()
    expect(started).toEqual(['a', 'b']) // both running before either finished
    b.release()
    await settle()
    a.release()
    const result = await run
    expect(result).toEqual({ text: 'b+a', steps: 2, stepLimited: false })
    const roles = f.store
      .messages(conv.id)
      .map((m) => (m.role === 'tool' ? `tool:${m.toolName}` : m.role))
    expect(roles).toEqual(['user', 'assistant', 'tool:b', 'tool:a', 'assistant'])
    // The model's second request carried the results.
    expect(llm.requests[1]?.history.filter((m) => m.role === 'tool')).toHaveLength(2)
    expect(llm.requests[0]?.tools.map((t) => t.name)).toEqual(['a', 'b'])
    expect(llm.requests[0]?.persona).toBe(defaultPersona)
  })

  it('a denied tool, a throwing tool, bad arguments and an unknown tool all come back as outcomes', async () => {
    const tools: Tool[] = [
      {
        name: 'forbidden',
        description: '',
        parameters: { type: 'object' },
        policy: { text: 'deny' },
        call: async () => 'ran',
      },
      {
        name: 'broken',
        description: '',
        parameters: { type: 'object' },
        policy: { text: 'allow' },
        call: async () => {
          throw new Error('boom')
        },
      },
      {
        name: 'typed',
        description: '',
        parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        policy: { text: 'allow' },
        call: async () => 'ran',
      },
    ]
    const { f, loop, conv } = setup(tools, [
      {
        text: '',
        toolCalls: [
          { id: '1', name: 'forbidden', args: {} },
          { id: '2', name: 'broken', args: {} },
          { id: '3', name: 'typed', args: { n: 'x' } },
          { id: '4', name: 'nonexistent', args: {} },
        ],
      },
      { text: 'Sorry, none of that worked.', toolCalls: [] },
    ])
    const result = await loop.run({ conversationId: conv.id, text: 'go', channel: 'text' })
    expect(result.text).toBe('Sorry, none of that worked.')
    const outcomes = Object.fromEntries(
      f.store
        .messages(conv.id)
        .flatMap((m) =>
          m.role === 'tool' ? [[m.toolName, m.outcome.ok ? 'ok' : m.outcome.code]] : [],
        ),
    )
    expect(outcomes).toEqual({
      forbidden: 'NOC_ERR_DENIED_BY_POLICY',
      broken: 'NOC_ERR_TOOL_FAILED',
      typed: 'NOC_ERR_INVALID_ARGS',
      nonexistent: 'NOC_ERR_UNKNOWN_TOOL',
    })
  })

  it('a gated tool waits for the phone and tells the asker', async () => {
    const tool: Tool = {
      name: 'unlock',
      description: '',
      parameters: { type: 'object' },
      critical: true,
      describe: () => 'unlock the front door',
      call: async () => 'unlocked',
    }
    const { f, loop, conv } = setup(
      [tool],
      [
        { text: '', toolCalls: [{ id: '1', name: 'unlock', args: {} }] },
        { text: 'Done.', toolCalls: [] },
      ],
    )
    const notices: string[] = []
    const run = loop.run({
      conversationId: conv.id,
      text: 'unlock',
      channel: 'text',
      onPending: (n) => notices.push(`${n.audience}: ${n.action}`),
    })
    await settle()
    expect(notices).toEqual(["Anna's phone: unlock the front door"])
    expect(f.approver.last().request.channel).toBe('text')
    f.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    expect((await run).text).toBe('Done.')
  })

  it('stops at the step bound with a message, and stores it', async () => {
    const loopTool: Tool = {
      name: 'again',
      description: '',
      parameters: { type: 'object' },
      policy: { text: 'allow' },
      call: async () => 'more',
    }
    const forever = () => ({ text: '', toolCalls: [{ id: 'x', name: 'again', args: {} }] })
    const { f, llm, loop, conv } = setup(
      [loopTool],
      Array.from({ length: 10 }, () => forever),
      3,
    )
    const result = await loop.run({ conversationId: conv.id, text: 'loop', channel: 'text' })
    expect(result.stepLimited).toBe(true)
    expect(llm.requests).toHaveLength(3)
    const last = f.store.messages(conv.id).at(-1)
    expect(last).toMatchObject({ role: 'assistant', text: result.text })
  })

  it('gives each call its own id when the model omits or repeats them', async () => {
    const t: Tool = {
      name: 't',
      description: '',
      parameters: { type: 'object' },
      policy: { text: 'allow' },
      call: async () => 1,
    }
    const { f, loop, conv } = setup(
      [t],
      [
        {
          text: '',
          toolCalls: [
            { id: '', name: 't', args: {} },
            { id: 'd', name: 't', args: {} },
            { id: 'd', name: 't', args: {} },
          ],
        },
        { text: 'ok', toolCalls: [] },
      ],
    )
    await loop.run({ conversationId: conv.id, text: 'x', channel: 'text' })
    const ids = f.store.messages(conv.id).flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []))
    expect(new Set(ids).size).toBe(3)
  })

  it('continues a conversation that began by voice, with its whole history', async () => {
    const { f, llm, loop } = setup([], [{ text: 'It is still locked.', toolCalls: [] }])
    const conv = f.store.createConversation({ channel: 'voice', at: f.clock.now() })
    f.store.append(conv.id, { role: 'user', text: 'Is the door locked?', channel: 'voice', at: 1 })
    f.store.append(conv.id, {
      role: 'assistant',
      text: 'Yes.',
      toolCalls: [],
      channel: 'voice',
      at: 2,
    })
    await loop.run({ conversationId: conv.id, text: 'Still?', channel: 'text' })
    expect(
      llm.requests[0]?.history.map((m) => [m.role, m.channel, 'text' in m ? m.text : '']),
    ).toEqual([
      ['user', 'voice', 'Is the door locked?'],
      ['assistant', 'voice', 'Yes.'],
      ['user', 'text', 'Still?'],
    ])
  })
})
