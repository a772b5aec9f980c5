import { afterEach, describe, expect, it } from 'vitest'
import type { NocturnError } from '../../src/core/errors.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { liveSetup, recorder } from '../gemini/helpers.js'
import { OPENAI_KEY, openaiRealtime, tick } from './helpers.js'

let server: FakeRealtimeServer | undefined
afterEach(async () => server?.close())

async function opened(o: Parameters<typeof FakeRealtimeServer.start>[0] = {}) {
  server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY, ...o })
  const llm = openaiRealtime({ baseUrl: server.baseUrl })
  const events = recorder()
  const session = await llm.open(
    liveSetup({ history: [{ role: 'user', text: 'Earlier words.', seq: 1, at: 0 } as never] }),
    events,
  )
  const conn = await server.waitForConnection(0)
  return { server, llm, events, session, conn }
}

describe('OpenAI Realtime adapter over the real SDK, against the fake service', () => {
  it('sets the session up: key in the header not the URL, 24 kHz both ways, transcription, server VAD, tools, the history as items', async () => {
    const { conn, server: s, llm } = await opened()
    // No resumption here, and the person's words transcribed after the reply may begin.
    expect(llm.capabilities).toMatchObject({ resumption: false, lateTranscription: true })
    expect(s.urls[0]).toBe('/v1/realtime?model=gpt-realtime')
    expect(conn.session).toMatchObject({
      type: 'realtime',
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: 24000 },
          transcription: { model: 'gpt-4o-mini-transcribe', language: 'en' },
          turn_detection: { type: 'server_vad', create_response: true, interrupt_response: true },
        },
        output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'marin' },
      },
      tools: [
        expect.objectContaining({ type: 'function', name: 'unlock_door' }),
        expect.objectContaining({ type: 'function', name: 'current_time' }),
      ],
    })
    expect(conn.eventsOf('conversation.item.create').map((e) => e.item)).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Earlier words.' }] },
    ])
  })

  it('the 16 kHz microphone goes out at 24 kHz: 20 ms in, 20 ms out', async () => {
    const { session, conn, server: s } = await opened()
    for (let i = 0; i < 50; i++) session.sendAudio(new Uint8Array(640).fill(i))
    await s.until(() => conn.heardMs >= 1000)
    expect(conn.heardMs).toBe(1000)
  })

  it('a reply: audio, its transcript, then generationComplete and turnComplete; usage counted', async () => {
    const { events, conn } = await opened()
    conn.user('What time is it?')
    conn.reply({ text: 'It is noon.', audioMs: 400 })
    await server?.until(() => events.types().includes('turnComplete'))
    const audio = events.log.filter((e) => e.type === 'audio')
    expect(audio.reduce((n, e) => n + (e.type === 'audio' ? e.bytes : 0), 0)).toBe(400 * 48)
    expect(
      events.log
        .filter((e) => e.type === 'outputTranscription')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('It is noon. ')
    expect(events.types().filter((t) => t !== 'audio' && t !== 'outputTranscription')).toEqual([
      'inputTranscription',
      'usage',
      'generationComplete',
      'turnComplete',
    ])
  })

  it('a tool call: its arguments parsed; the final output and a response.create; the call turn ends with the words after it', async () => {
    const { events, conn, session, server: s } = await opened()
    conn.user('Unlock the front door.')
    conn.reply({ calls: [{ callId: 'call_1', name: 'unlock_door', args: { door: 'front' } }] })
    await s.until(() => events.types().includes('toolCall'))
    expect(events.log.find((e) => e.type === 'toolCall')).toEqual({
      type: 'toolCall',
      calls: [{ id: 'call_1', name: 'unlock_door', args: { door: 'front' } }],
    })
    await s.until(() => events.types().includes('generationComplete'))
    expect(events.types()).not.toContain('turnComplete')
    session.respond({
      id: 'call_1',
      name: 'unlock_door',
      response: { output: { unlocked: 'front' } },
      scheduling: 'INTERRUPT',
    })
    await s.until(() => events.types().includes('turnComplete'))
    expect(conn.outputs).toEqual([{ callId: 'call_1', output: { output: { unlocked: 'front' } } }])
    expect(conn.eventsOf('response.create')).toHaveLength(1)
    expect(conn.errors).toEqual([])
  })

  it('interim then final: the final comes as a second call-and-output pair, never as a message; nothing injected as speech', async () => {
    const { events, conn, session, server: s } = await opened()
    conn.user('Unlock the front door.')
    conn.reply({ calls: [{ callId: 'call_1', name: 'unlock_door', args: { door: 'front' } }] })
    await s.until(() => events.types().includes('generationComplete'))
    conn.replies.push(
      { text: 'I have asked Anna.', audioMs: 200 },
      { text: 'The door is open.', audioMs: 200 },
    )
    session.respond({
      id: 'call_1',
      name: 'unlock_door',
      response: { status: 'waiting_for_approval', approver: "Anna's phone" },
      willContinue: true,
      scheduling: 'WHEN_IDLE',
    })
    await s.until(() => conn.eventsOf('response.create').length === 1 && !conn.responding)
    session.respond({
      id: 'call_1',
      name: 'unlock_door',
      response: { output: { unlocked: 'front' } },
      scheduling: 'INTERRUPT',
      willContinue: false,
    })
    await s.until(() => conn.eventsOf('response.create').length === 2 && !conn.responding)
    const created = conn
      .eventsOf('conversation.item.create')
      .map((e) => e.item as Record<string, unknown>)
    expect(created.slice(1)).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: JSON.stringify({ status: 'waiting_for_approval', approver: "Anna's phone" }),
      },
      {
        type: 'function_call',
        call_id: 'call_1_final',
        name: 'unlock_door',
        arguments: '{"door":"front"}',
      },
      {
        type: 'function_call_output',
        call_id: 'call_1_final',
        output: JSON.stringify({ output: { unlocked: 'front' } }),
      },
    ])
    expect(created.some((i) => i.type === 'message' && i !== created[0])).toBe(false)
    expect(conn.errors).toEqual([])
  })

  it('one response at a time: answers landing while the model speaks wait, and are one response.create after it — none refused, none lost', async () => {
    const { events, conn, session, server: s } = await opened()
    conn.reply({
      calls: [
        { callId: 'c1', name: 'unlock_door', args: { door: 'front' } },
        { callId: 'c2', name: 'current_time' },
      ],
    })
    await s.until(() => events.types().includes('generationComplete'))
    conn.reply({ text: 'Let me see.', audioMs: 200, hold: true })
    await s.until(() => events.types().filter((t) => t === 'audio').length > 0)
    session.respond({
      id: 'c1',
      name: 'unlock_door',
      response: { output: 1 },
      scheduling: 'WHEN_IDLE',
    })
    session.respond({
      id: 'c2',
      name: 'current_time',
      response: { output: 2 },
      scheduling: 'INTERRUPT',
    })
    await s.until(() => conn.outputs.length === 2)
    await tick()
    expect(conn.eventsOf('response.create')).toHaveLength(0)
    conn.finish()
    await s.until(() => conn.eventsOf('response.create').length === 1 && !conn.responding)
    await tick()
    expect(conn.eventsOf('response.create')).toHaveLength(1)
    expect(conn.errors).toEqual([])
  })

  it('a WHEN_IDLE answer waits while the person speaks and goes when they stop; an INTERRUPT one does not wait for them', async () => {
    const { events, conn, session, server: s } = await opened()
    conn.reply({
      calls: [
        { callId: 'c1', name: 'current_time' },
        { callId: 'c2', name: 'current_time' },
      ],
    })
    await s.until(() => events.types().includes('generationComplete'))
    conn.speechStarted()
    await s.until(() => events.types().includes('turnComplete'))
    session.respond({
      id: 'c1',
      name: 'current_time',
      response: { output: 1 },
      scheduling: 'WHEN_IDLE',
    })
    await s.until(() => conn.outputs.length === 1)
    await tick()
    expect(conn.eventsOf('response.create')).toHaveLength(0)
    conn.speechStopped()
    await s.until(() => conn.eventsOf('response.create').length === 1 && !conn.responding)
    conn.speechStarted()
    session.respond({
      id: 'c2',
      name: 'current_time',
      response: { output: 2 },
      scheduling: 'INTERRUPT',
    })
    await s.until(() => conn.eventsOf('response.create').length === 2)
    expect(conn.errors).toEqual([])
  })

  it('mute: an utterance in progress is committed, the room between utterances cleared, once per pause', async () => {
    const { conn, session, server: s } = await opened()
    session.sendAudio(new Uint8Array(640))
    conn.speechStarted()
    await tick()
    session.endAudio()
    session.endAudio()
    await s.until(() => conn.eventsOf('input_audio_buffer.commit').length === 1)
    conn.speechStopped()
    session.sendAudio(new Uint8Array(640))
    await tick()
    session.endAudio()
    await s.until(() => conn.eventsOf('input_audio_buffer.clear').length === 1)
    await tick()
    expect(conn.eventsOf('input_audio_buffer.commit')).toHaveLength(1)
  })

  it('a response.create that bounces off a response the server started at the same moment is sent again after it', async () => {
    const { events, conn, session, server: s } = await opened()
    conn.reply({ calls: [{ callId: 'c1', name: 'current_time' }] })
    await s.until(() => events.types().includes('generationComplete'))
    // The server's VAD starts a reply; our create, sent before we heard of it, is refused.
    conn.reply({ text: 'Yes?', audioMs: 100, hold: true })
    session.respond({
      id: 'c1',
      name: 'current_time',
      response: { output: 1 },
      scheduling: 'INTERRUPT',
    })
    await s.until(() => conn.errors.length === 1)
    expect(conn.errors[0]).toMatchObject({ code: 'conversation_already_has_active_response' })
    conn.finish()
    await s.until(() => conn.eventsOf('response.create').length === 2 && !conn.responding)
    expect(conn.errors).toHaveLength(1)
  })

  it('barge-in: speech over a reply is interrupted; the cut truncates the item to what was heard, and its late audio is dropped', async () => {
    const { events, conn, session, server: s } = await opened()
    conn.reply({ text: 'Once upon a time there was a long story.', audioMs: 3000, hold: true })
    await s.until(() => events.log.filter((e) => e.type === 'audio').length === 75)
    conn.speechStarted()
    await s.until(() => events.types().includes('interrupted'))
    session.playbackCut({ playedMs: 1200, discardedMs: 1800 })
    await s.until(() => conn.eventsOf('conversation.item.truncate').length === 1)
    const item = conn.items.find((i) => i.role === 'assistant')
    expect(conn.eventsOf('conversation.item.truncate')[0]).toMatchObject({
      item_id: item?.id,
      content_index: 0,
      audio_end_ms: 1200,
    })
    await s.until(() => item?.audioMs === 1200)
    expect(conn.errors).toEqual([])
    // The server cancelled the response itself: no response.cancel was needed.
    expect(conn.eventsOf('response.cancel')).toEqual([])
  })

  it('the stop button over a reply still being made: cancelled and truncated', async () => {
    const { events, conn, session, server: s } = await opened()
    conn.reply({ text: 'A long answer.', audioMs: 2000, hold: true })
    await s.until(() => events.log.filter((e) => e.type === 'audio').length === 50)
    session.playbackCut({ playedMs: 500, discardedMs: 1500 })
    await s.until(
      () => conn.eventsOf('conversation.item.truncate').length === 1 && !conn.responding,
    )
    expect(conn.eventsOf('response.cancel')).toHaveLength(1)
    expect(conn.eventsOf('conversation.item.truncate')[0]).toMatchObject({ audio_end_ms: 500 })
    expect(conn.errors).toEqual([])
  })

  it.each([
    [401, /key was refused \(401\)/, 'NOC_ERR_LIVE_KEY_REFUSED'],
    [403, /may not use .* \(403\)/, 'NOC_ERR_LIVE_KEY_REFUSED'],
    [429, /quota or rate limit .* \(429\)/, 'NOC_ERR_LIVE_QUOTA'],
    [500, /answered 500/, 'NOC_ERR_LIVE_SERVER_ERROR'],
  ] as const)(
    'a connection refused with %i is an error a person can act on, without the key',
    async (status, said, code) => {
      server = await FakeRealtimeServer.start({ refuse: status })
      const err = (await openaiRealtime({ baseUrl: server.baseUrl })
        .open(liveSetup(), recorder())
        .catch((e: unknown) => e)) as NocturnError
      expect(err.code).toBe(code)
      expect(err.message).toMatch(said)
      expect(err.message).not.toContain(OPENAI_KEY)
    },
  )

  it('an unknown model is named, with doctor', async () => {
    server = await FakeRealtimeServer.start()
    const err = (await openaiRealtime({ baseUrl: server.baseUrl, model: 'gpt-realtime-9' })
      .open(liveSetup(), recorder())
      .catch((e: unknown) => e)) as NocturnError
    expect(err.code).toBe('NOC_ERR_LIVE_UNKNOWN_MODEL')
    expect(err.message).toContain('nocturn doctor')
  })
})
