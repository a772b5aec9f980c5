import { afterEach, describe, expect, it } from 'vitest'
import { GeminiLLM } from '../../src/adapters/gemini/gemini-llm.js'
import type { Message } from '../../src/core/conversation.js'
import { silentLogger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { TurnLoop } from '../../src/turn/turn-loop.js'
import { coreFixture } from '../helpers/core.js'
import { KEY, unlockTool } from './helpers.js'

let server: FakeLiveServer
afterEach(async () => server?.close())

const MODEL = 'gemini-3.5-flash'

function llm() {
  return new GeminiLLM({ apiKey: KEY, model: MODEL, baseUrl: server.baseUrl, logger: silentLogger })
}

const signal = () => new AbortController().signal
const ask: Message[] = [{ role: 'user', text: 'What time is it?', channel: 'text', at: 1 }]

describe('the LLM adapter on generateContent, through the real SDK', () => {
  it('sends persona, tools and a history with calls and responses paired by id and name', async () => {
    server = await FakeLiveServer.start({
      generate: [
        {
          thought: 'the user wants the door',
          functionCalls: [{ id: 'c-1', name: 'unlock_door', args: { door: 'front' } }],
          thoughtSignature: 'sig-abc',
        },
        { text: 'The front door is unlocked.' },
      ],
    })
    const model = llm()
    const history: Message[] = [
      { role: 'user', text: 'Is the door locked?', channel: 'voice', at: 1 },
      { role: 'assistant', text: 'Yes.', toolCalls: [], channel: 'voice', at: 2 },
      { role: 'user', text: 'Unlock the front door.', channel: 'text', at: 3 },
    ]
    const first = await model.next(
      { persona: defaultPersona, history, tools: [unlockTool] },
      signal(),
    )
    expect(first).toEqual({
      text: '',
      toolCalls: [{ id: 'c-1', name: 'unlock_door', args: { door: 'front' } }],
    })
    const more: Message[] = [
      ...history,
      { role: 'assistant', text: '', toolCalls: first.toolCalls, channel: 'text', at: 4 },
      {
        role: 'tool',
        toolCallId: 'c-1',
        toolName: 'unlock_door',
        args: { door: 'front' },
        outcome: { ok: true, value: { locked: false } },
        channel: 'text',
        at: 5,
      },
    ]
    const second = await model.next(
      { persona: defaultPersona, history: more, tools: [unlockTool] },
      signal(),
    )
    expect(second).toEqual({ text: 'The front door is unlocked.', toolCalls: [] })

    const req = server.rest.filter((r) => r.path.endsWith(':generateContent'))
    expect(req.map((r) => r.path)).toEqual([
      `/v1beta/models/${MODEL}:generateContent`,
      `/v1beta/models/${MODEL}:generateContent`,
    ])
    const body = req[1]?.body as Record<string, unknown>
    expect(body.systemInstruction).toEqual({
      parts: [{ text: defaultPersona.instruction }],
      role: 'user',
    })
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'unlock_door',
            description: 'Unlock a door of the house.',
            parameters: {
              type: 'OBJECT',
              properties: {
                door: { type: 'STRING', description: 'which door', enum: ['front', 'back'] },
              },
              required: ['door'],
            },
          },
        ],
      },
    ])
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Is the door locked?' }] },
      { role: 'model', parts: [{ text: 'Yes.' }] },
      { role: 'user', parts: [{ text: 'Unlock the front door.' }] },
      {
        role: 'model',
        parts: [
          {
            functionCall: { id: 'c-1', name: 'unlock_door', args: { door: 'front' } },
            thoughtSignature: 'sig-abc',
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              id: 'c-1',
              name: 'unlock_door',
              response: { output: { locked: false } },
            },
          },
        ],
      },
    ])
  })

  it('streams text through onText when asked, and the whole text is still in the answer', async () => {
    server = await FakeLiveServer.start({
      generate: [
        { thought: 'hmm', text: 'It is twenty past seven in the evening, quite late already.' },
      ],
    })
    const deltas: string[] = []
    const answer = await llm().next(
      { persona: defaultPersona, history: ask, tools: [], onText: (d) => deltas.push(d) },
      signal(),
    )
    expect(deltas.length).toBeGreaterThan(2)
    expect(deltas.join('')).toBe('It is twenty past seven in the evening, quite late already.')
    expect(answer.text).toBe(deltas.join(''))
    expect(server.rest.at(-1)?.path).toBe(`/v1beta/models/${MODEL}:streamGenerateContent`)
    expect(server.rest.at(-1)?.query.alt).toBe('sse')
  })

  it('a call without an id gets one, so its answer can be paired', async () => {
    server = await FakeLiveServer.start({
      generate: [{ functionCalls: [{ name: 'current_time' }] }],
    })
    const a = await llm().next({ persona: defaultPersona, history: ask, tools: [] }, signal())
    expect(a.toolCalls[0]?.id).toMatch(/^call-[0-9a-f-]{36}$/)
  })

  it('a live-only model is refused with the service message, without the key', async () => {
    server = await FakeLiveServer.start()
    const live = new GeminiLLM({
      apiKey: KEY,
      model: 'gemini-3.8-live',
      baseUrl: server.baseUrl,
      logger: silentLogger,
    })
    const err = await live
      .next({ persona: defaultPersona, history: ask, tools: [] }, signal())
      .catch((e: unknown) => e)
    expect((err as Error).message).toMatch(/not supported for generateContent/)
    expect((err as Error).message).not.toContain(KEY)
  })

  it('drives the real turn loop: a typed request, a tool call, the answer', async () => {
    server = await FakeLiveServer.start({
      generate: [
        { functionCalls: [{ id: 't-1', name: 'lamp', args: { on: true } }] },
        (body) => {
          const contents = body.contents as {
            parts: { functionResponse?: { response: unknown } }[]
          }[]
          const result = contents.at(-1)?.parts[0]?.functionResponse?.response
          return { text: `Done: ${JSON.stringify(result)}` }
        },
      ],
    })
    const lamp: Tool<{ on: boolean }> = {
      name: 'lamp',
      description: 'Switch the lamp.',
      parameters: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'] },
      policy: { text: 'allow' },
      call: async (_ctx, a) => ({ lamp: a.on ? 'on' : 'off' }),
    }
    const f = coreFixture()
    const loop = new TurnLoop({
      llm: llm(),
      tools: new ToolSet([lamp as Tool]),
      gate: f.gate,
      store: f.store,
      persona: defaultPersona,
      clock: f.clock,
      logger: silentLogger,
    })
    const conv = f.store.createConversation({ channel: 'text', at: 0 })
    const r = await loop.run({ conversationId: conv.id, text: 'Lamp on, please.', channel: 'text' })
    expect(r.text).toBe('Done: {"output":{"lamp":"on"}}')
  })
})
