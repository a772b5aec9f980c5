import { afterEach, describe, expect, it } from 'vitest'
import { OpenAILLM } from '../../src/adapters/openai/openai-llm.js'
import { silentLogger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { TurnLoop } from '../../src/turn/turn-loop.js'
import { DEFAULT_CONFIRM_PHRASES } from '../../src/voice/wake-confirmation.js'
import { OPENAI_KEY } from '../openai/helpers.js'
import { doorTool, openaiVoiceFixture, settle, timeTool } from './harness.js'

let server: FakeRealtimeServer
afterEach(async () => server?.close())

const tick = () => new Promise((r) => setTimeout(r, 30))

describe('voice driver over the real openai package: OpenAIRealtime against the fake Realtime service', () => {
  it('the offline story: a gated call answered at once with what is pending, the phone’s yes, the final result, barge-in truncated to the played ms, the chat kept and continued by typing', async () => {
    server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
    const v = await openaiVoiceFixture(server)
    const { conn } = v

    // The room asks; the model calls the gated tool and its response ends.
    conn.replies.push({ text: 'I have asked Anna.', audioMs: 300 })
    conn.user('Unlock the front door.')
    conn.reply({ calls: [{ callId: 'c1', name: 'unlock_door', args: { door: 'front' } }] })

    // At once, before any phone answers: the call's output names what is pending, and the
    // model is asked to speak (it says so, and the conversation carries on).
    await server.until(() => conn.outputs.length === 1 && !conn.responding)
    expect(conn.outputs[0]).toEqual({
      callId: 'c1',
      output: expect.objectContaining({
        status: 'waiting_for_approval',
        action: 'unlock the front door',
      }),
    })
    expect(conn.eventsOf('response.create')).toHaveLength(1)
    await tick()
    await settle()
    await v.clock.advance(1000) // the room hears "I have asked Anna."
    expect(v.unlocked).toEqual([])

    // The phone says yes: the tool runs, and its result reaches the model as the tool's second
    // report — a call-and-output pair, never words put in anyone's mouth.
    conn.replies.push({ text: 'The front door is open.', audioMs: 300 })
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    await server.until(
      () =>
        conn.outputs.length === 2 &&
        conn.eventsOf('response.create').length === 2 &&
        !conn.responding,
    )
    expect(v.unlocked).toEqual(['front'])
    expect(conn.outputs[1]).toEqual({
      callId: 'c1_final',
      output: { output: { unlocked: 'front' } },
    })
    const created = conn.eventsOf('conversation.item.create').map((e) => e.item as { type: string })
    expect(created.map((i) => i.type)).toEqual([
      'function_call_output',
      'function_call',
      'function_call_output',
    ])
    await tick()
    await settle()
    await v.clock.advance(1000)

    // A long answer, far ahead of the speaker; 700 ms are heard, then the person talks over it.
    conn.reply({ text: 'Once upon a time there was a very long story.', audioMs: 3000, hold: true })
    await server.until(() => conn.responding)
    await tick()
    await settle()
    await v.clock.advance(700)
    conn.user('Stop, thanks.')
    await server.until(() => conn.eventsOf('conversation.item.truncate').length === 1)
    expect(v.speaker.drops.at(-1)).toMatchObject({ discardedMs: 2300 })
    const story = conn.items.filter((i) => i.role === 'assistant').at(-1)
    expect(conn.eventsOf('conversation.item.truncate')[0]).toMatchObject({
      item_id: story?.id,
      audio_end_ms: 700,
    })
    // The service's record of the reply is now what the room heard, and nothing it did not.
    await server.until(() => story?.audioMs === 700)
    expect(story?.transcript).toBe('')
    expect(conn.errors).toEqual([])

    await v.driver.stop()
    const summary = await v.done
    const chat = v.store
      .messages(summary.conversationId)
      .map((m) =>
        m.role === 'tool'
          ? `tool ${m.toolCallId}`
          : m.role === 'assistant'
            ? `assistant: ${m.text}${m.toolCalls.map((c) => `[${c.id}]`).join('')}`
            : `user: ${m.text}`,
      )
    expect(chat).toEqual([
      'user: Unlock the front door.',
      'assistant: [c1]',
      'assistant: I have asked Anna.',
      'tool c1',
      'assistant: The front door is open.',
      'user: Stop, thanks.',
    ])

    // Later, typed on the phone: the same conversation goes on, over chat completions.
    server.queueChat({ text: 'Yes, Anna let the plumber in.' })
    const loop = new TurnLoop({
      llm: new OpenAILLM({
        apiKey: OPENAI_KEY,
        model: 'gpt-4.1-mini',
        baseUrl: server.baseUrl,
        logger: silentLogger,
      }),
      tools: new ToolSet([timeTool, doorTool([])]),
      gate: v.gate,
      store: v.store,
      persona: defaultPersona,
      clock: v.clock,
      logger: silentLogger,
    })
    const result = await loop.run({
      conversationId: summary.conversationId,
      text: 'Is the door open?',
      channel: 'text',
    })
    expect(result.text).toBe('Yes, Anna let the plumber in.')
    const sent = server.rest.find((r) => r.path === '/v1/chat/completions')?.body as {
      messages: { role: string; content?: string | null; tool_call_id?: string }[]
    }
    expect(sent.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'assistant',
      'user',
      'user',
    ])
    expect(sent.messages.at(-1)).toMatchObject({ role: 'user', content: 'Is the door open?' })
    expect(sent.messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'c1' })
  })

  it('the session limit: shortly before it, at a quiet moment, the connection goes and a fresh one opens with the words so far', async () => {
    server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
    const v = await openaiVoiceFixture(server, {
      sessionLimitMs: 60_000,
      sessionLimitLeadMs: 10_000,
    })
    const { conn } = v
    conn.user('What time is it?')
    conn.reply({ text: 'It is noon.', audioMs: 300 })
    await server.until(() => !conn.responding)
    await tick()
    await settle()
    // A reply is still being made when the limit nears: the connection waits for its end.
    conn.reply({ text: 'And a long story.', audioMs: 300, hold: true })
    await tick()
    await settle()
    await v.clock.advance(50_000)
    await tick()
    expect(conn.open).toBe(true)
    conn.finish()
    const next = await server.waitForConnection(1)
    expect(conn.open).toBe(false)
    const history = next.eventsOf('conversation.item.create').map((e) => e.item)
    expect(history).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'What time is it?' }],
      },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'It is noon.' }],
      },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'And a long story.' }],
      },
    ])
    await v.driver.stop()
    await v.done
  })

  it('the wake’s second opinion comes from the provider’s input transcription: heard, the reply plays; not heard, nothing is kept', async () => {
    server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
    const confirm = { confirm: { phrases: DEFAULT_CONFIRM_PHRASES, withinMs: 10_000 } }
    const v = await openaiVoiceFixture(server, {}, confirm)
    v.conn.user('Hey Jarvis, what time is it?')
    v.conn.reply({ text: 'It is noon.', audioMs: 300 })
    await server.until(() => !v.conn.responding)
    await tick()
    await settle()
    await v.clock.advance(1000)
    expect(v.speaker.playedBytes()).toBe(300 * 48)
    await v.driver.stop()
    expect(await v.done).toMatchObject({ unconfirmed: false })
    await server.close()

    server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
    const w = await openaiVoiceFixture(server, {}, confirm)
    w.conn.user('What a lovely day it is.')
    w.conn.reply({ text: 'It is.', audioMs: 300 })
    await server.until(() => !w.conn.responding)
    await tick()
    await settle()
    await w.clock.advance(10_000)
    const summary = await w.done
    expect(summary).toMatchObject({ reason: 'unconfirmed', unconfirmed: true })
    expect(w.speaker.playedBytes()).toBe(0)
    expect(w.store.listConversations()).toEqual([])
  })

  it('the person’s words transcribed after the reply began (as the service does): the chat reads user, tool call, tool outcome, assistant — the call itself not delayed', async () => {
    server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
    const v = await openaiVoiceFixture(server)
    const { conn } = v
    const chat = () =>
      v.store
        .listConversations()
        .flatMap((c) => v.store.messages(c.id))
        .map((m) =>
          m.role === 'tool'
            ? `tool ${m.toolCallId}`
            : m.role === 'assistant'
              ? `assistant: ${m.text}${m.toolCalls.map((c) => `[${c.id}]`).join('')}`
              : `user: ${m.text}`,
        )

    // The question's transcription is still on its way when the model calls the tool.
    conn.replies.push({ text: 'It is noon.', audioMs: 300 })
    conn.user('What time is it?', { transcription: 'late' })
    conn.reply({ calls: [{ callId: 'c1', name: 'current_time' }] })
    // The call runs and is answered at once, before the words are known.
    await server.until(
      () =>
        conn.outputs.length === 1 &&
        conn.eventsOf('response.create').length === 1 &&
        !conn.responding,
    )
    expect(conn.outputs[0]).toEqual({ callId: 'c1', output: { output: { time: '12:00' } } })
    await tick()
    await settle()
    conn.transcribe()
    await tick()
    await settle()
    await v.clock.advance(1000)

    // The next question, transcribed while its reply is being made.
    conn.user('Thanks.', { transcription: 'late' })
    conn.reply({ text: 'You are welcome.', audioMs: 300, hold: true })
    await server.until(() => conn.responding)
    conn.transcribe()
    conn.finish()
    await server.until(() => !conn.responding)
    await tick()
    await settle()
    await v.clock.advance(1000)
    expect(chat()).toEqual([
      'user: What time is it?',
      'assistant: [c1]',
      'tool c1',
      'assistant: It is noon.',
      'user: Thanks.',
      'assistant: You are welcome.',
    ])
    await v.driver.stop()
    await v.done
    expect(conn.errors).toEqual([])
  })
})
