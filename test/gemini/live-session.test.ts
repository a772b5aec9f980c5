import { afterEach, describe, expect, it } from 'vitest'
import type { LiveSession } from '../../src/ports/live-llm.js'
import {
  FakeLiveServer,
  type FakeLiveServerOptions,
  phrase,
  serverFrame,
} from '../../src/testing/fake-live-server/index.js'
import { ASYNC, geminiLive, liveSetup, recorder } from './helpers.js'

let server: FakeLiveServer
let session: LiveSession | undefined
afterEach(async () => {
  await session?.close()
  session = undefined
  await server?.close()
})

async function start(model = ASYNC, o: FakeLiveServerOptions = {}) {
  server = await FakeLiveServer.start(o)
  const events = recorder()
  const live = geminiLive({ model, baseUrl: server.baseUrl })
  session = await live.open(liveSetup(), events)
  const conn = await server.waitForConnection(0)
  return { events, conn, session }
}

describe('frames the adapter sends', () => {
  it('microphone audio as 16 kHz PCM realtimeInput, byte for byte, and audioStreamEnd on mute', async () => {
    const { session: s } = await start()
    const pcm = new Uint8Array(640).map((_, i) => i % 251)
    // A view into a larger buffer: only its own bytes may be sent.
    const big = new Uint8Array(1000)
    big.set(pcm, 100)
    s.sendAudio(big.subarray(100, 740))
    s.endAudio()
    s.endAudio() // a second mute says nothing new
    s.sendAudio(pcm)
    s.endAudio()
    await server.until(() => server.framesOf('realtimeInput').length === 4)
    expect(server.framesOf('realtimeInput')).toEqual([
      {
        realtimeInput: {
          audio: { data: Buffer.from(pcm).toString('base64'), mimeType: 'audio/pcm;rate=16000' },
        },
      },
      { realtimeInput: { audioStreamEnd: true } },
      {
        realtimeInput: {
          audio: { data: Buffer.from(pcm).toString('base64'), mimeType: 'audio/pcm;rate=16000' },
        },
      },
      { realtimeInput: { audioStreamEnd: true } },
    ])
  })

  it('interim and final function responses: id, name, willContinue, scheduling top-level, a cancellation reported', async () => {
    const { events, conn, session: s } = await start()
    conn.send(
      serverFrame.toolCall([
        { id: 'fc-1', name: 'unlock_door', args: { door: 'front' } },
        { id: 'fc-2', name: 'current_time' },
      ]),
    )
    await server.until(() => events.types().includes('toolCall'))
    expect(events.log.find((e) => e.type === 'toolCall')).toEqual({
      type: 'toolCall',
      calls: [
        { id: 'fc-1', name: 'unlock_door', args: { door: 'front' } },
        { id: 'fc-2', name: 'current_time', args: {} },
      ],
    })
    const pending = {
      status: 'waiting_for_approval',
      approver: "Anna's phone",
      action: 'unlock the front door',
    }
    s.respond({ id: 'fc-1', name: 'unlock_door', response: pending, willContinue: true })
    s.respond({
      id: 'fc-2',
      name: 'current_time',
      response: { local: '07:20' },
      scheduling: 'WHEN_IDLE',
    })
    conn.send(serverFrame.cancellation(['fc-1']))
    await server.until(() => events.types().includes('toolCallCancellation'))
    // What may still be answered after a cancellation or a final is the voice driver's call
    // ledger's decision (test/voice/withdrawal, bad-input); the adapter sends what it is given.
    s.sendAudio(new Uint8Array(2)) // a marker: everything before it has been sent
    await server.until(() => server.framesOf('realtimeInput').length === 1)
    expect(server.framesOf('toolResponse')).toEqual([
      {
        toolResponse: {
          functionResponses: [
            { id: 'fc-1', name: 'unlock_door', response: pending, willContinue: true },
          ],
        },
      },
      {
        toolResponse: {
          functionResponses: [
            {
              id: 'fc-2',
              name: 'current_time',
              response: { local: '07:20' },
              willContinue: false,
              scheduling: 'WHEN_IDLE',
            },
          ],
        },
      },
    ])
  })

  it('on a synchronous model: no interim is sent and scheduling is left out of the final', async () => {
    const { conn, session: s } = await start('gemini-3.1-flash-live-preview')
    conn.send(serverFrame.toolCall([{ id: 'fc-9', name: 'unlock_door', args: { door: 'back' } }]))
    s.respond({
      id: 'fc-9',
      name: 'unlock_door',
      response: { status: 'waiting' },
      willContinue: true,
    })
    s.respond({
      id: 'fc-9',
      name: 'unlock_door',
      response: { error: 'denied' },
      scheduling: 'INTERRUPT',
    })
    await server.until(() => server.framesOf('toolResponse').length === 1)
    expect(server.framesOf('toolResponse')).toEqual([
      {
        toolResponse: {
          functionResponses: [{ id: 'fc-9', name: 'unlock_door', response: { error: 'denied' } }],
        },
      },
    ])
  })
})

describe('scheduling where the model does not support it', () => {
  it('gemini-3.8-live-extended-thinking: interim and final go out, scheduling is left out', async () => {
    const { conn, session: s } = await start('gemini-3.8-live-extended-thinking')
    conn.toolCall({ id: 'x1', name: 'current_time' })
    s.respond({
      id: 'x1',
      name: 'current_time',
      response: { status: 'working' },
      willContinue: true,
      scheduling: 'WHEN_IDLE',
    })
    s.respond({
      id: 'x1',
      name: 'current_time',
      response: { local: '07:20' },
      scheduling: 'INTERRUPT',
    })
    await server.until(() => conn.responses.length === 2)
    expect(conn.responses).toEqual([
      { id: 'x1', name: 'current_time', response: { status: 'working' }, willContinue: true },
      { id: 'x1', name: 'current_time', response: { local: '07:20' }, willContinue: false },
    ])
  })
})

describe('frames the adapter receives', () => {
  it('one frame carrying serverContent + usageMetadata + toolCall yields every event, in order', async () => {
    const { events, conn } = await start()
    const pcm = phrase('hello').pcm.subarray(0, 4800)
    conn.send({
      serverContent: {
        modelTurn: {
          parts: [
            { text: 'planning the answer', thought: true },
            { inlineData: { mimeType: 'audio/pcm;rate=24000', data: pcm.toString('base64') } },
            { inlineData: { mimeType: 'audio/pcm;rate=24000', data: pcm.toString('base64') } },
          ],
        },
        inputTranscription: { text: 'unlock the door' },
        outputTranscription: { text: 'Hello,' },
        generationComplete: true,
        turnComplete: true,
      },
      usageMetadata: { promptTokenCount: 500, responseTokenCount: 46, totalTokenCount: 546 },
      toolCall: { functionCalls: [{ id: 'fc-3', name: 'unlock_door', args: { door: 'front' } }] },
    })
    await server.until(() => events.types().includes('usage'))
    expect(events.types()).toEqual([
      'audio',
      'audio',
      'inputTranscription',
      'outputTranscription',
      'generationComplete',
      'turnComplete',
      'toolCall',
      'usage',
    ])
    const audio = events.log.filter((e) => e.type === 'audio')
    expect(audio.map((a) => (a.type === 'audio' ? a.pcm.equals(pcm) : false))).toEqual([true, true])
    expect(events.log.find((e) => e.type === 'usage')).toEqual({ type: 'usage', total: 546 })
  })

  it('interrupted and turnComplete in one frame are both reported', async () => {
    const { events, conn } = await start()
    conn.send({ serverContent: { interrupted: true, turnComplete: true } })
    await server.until(() => events.types().includes('turnComplete'))
    expect(events.types()).toEqual(['interrupted', 'turnComplete'])
  })

  it('binary and text WebSocket frames are read alike', async () => {
    const { events, conn } = await start()
    conn.send(serverFrame.outputTranscription('binary'), true)
    conn.send(serverFrame.outputTranscription('text'), false)
    await server.until(() => events.log.length === 2)
    expect(events.log).toEqual([
      { type: 'outputTranscription', text: 'binary' },
      { type: 'outputTranscription', text: 'text' },
    ])
  })

  it('a spoken phrase from the fixtures arrives as the same PCM, with its transcription', async () => {
    const hello = phrase('hello')
    const { events } = await start(ASYNC, {
      scripts: [
        {
          steps: [
            { speak: 'hello' },
            { send: serverFrame.generationComplete() },
            { send: serverFrame.turnComplete(120) },
          ],
        },
      ],
    })
    await server.until(() => events.types().includes('turnComplete'))
    const pcm = Buffer.concat(events.log.flatMap((e) => (e.type === 'audio' ? [e.pcm] : [])))
    expect(pcm.equals(hello.pcm)).toBe(true)
    const said = events.log.flatMap((e) => (e.type === 'outputTranscription' ? [e.text] : []))
    expect(said.join('')).toBe(`${hello.text} `) // ending in a space, as the service's pieces do
    expect(events.types().slice(-3)).toEqual(['generationComplete', 'turnComplete', 'usage'])
  })

  it('resumption handles, goAway with a string duration', async () => {
    const { events, conn } = await start()
    conn.send(serverFrame.resumption('handle-1'))
    conn.send(serverFrame.resumption('', false))
    conn.send(serverFrame.goAway('12.5s'))
    await server.until(() => events.types().includes('goAway'))
    expect(events.log).toEqual([
      { type: 'resumptionUpdate', handle: 'handle-1', resumable: true },
      { type: 'resumptionUpdate', handle: undefined, resumable: false },
      { type: 'goAway', timeLeftMs: 12_500 },
    ])
  })

  it('events that arrive with setupComplete wait until open() has resolved', async () => {
    server = await FakeLiveServer.start({
      scripts: [
        {
          steps: [
            { send: serverFrame.toolCall([{ id: 'early', name: 'current_time' }]) },
            { send: serverFrame.resumption('h0') },
          ],
        },
      ],
    })
    const events = recorder()
    const live = geminiLive({ baseUrl: server.baseUrl })
    const opened = live.open(liveSetup(), events)
    session = await opened
    const seenAtResolve = events.log.length
    await server.until(() => events.log.length === 2)
    expect(seenAtResolve).toBe(0)
    expect(events.types()).toEqual(['toolCall', 'resumptionUpdate'])
  })
})

describe('the fake server, driven by hand as the scripted FakeLiveLLM is', () => {
  it('barge-in mid-reply: audio, interrupted, turnComplete; the final answer of one call after another was withdrawn', async () => {
    const { events, conn, session: s } = await start()
    conn.user('Unlock the front door and the back door.')
    conn.toolCall(
      { id: 'a', name: 'unlock_door', args: { door: 'front' } },
      { id: 'b', name: 'unlock_door', args: { door: 'back' } },
    )
    conn.model('Asking Anna.')
    conn.audio(200)
    conn.interrupted()
    conn.turnComplete()
    conn.cancel('b')
    conn.goAway(30_000)
    conn.handle('h-9')
    await server.until(() => events.types().includes('resumptionUpdate'))
    // The withdrawn call 'b' gets nothing: the driver's ledger never asks (test/voice/withdrawal).
    s.respond({ id: 'a', name: 'unlock_door', response: { output: 'ok' }, scheduling: 'WHEN_IDLE' })
    s.sendAudio(new Uint8Array(2)) // a marker: everything before it has been sent
    await server.until(() => server.framesOf('realtimeInput').length === 1)
    expect(conn.responses).toEqual([
      {
        id: 'a',
        name: 'unlock_door',
        response: { output: 'ok' },
        willContinue: false,
        scheduling: 'WHEN_IDLE',
      },
    ])
    expect(events.types().filter((t) => t !== 'audio')).toEqual([
      'inputTranscription',
      'toolCall',
      'outputTranscription',
      'interrupted',
      'turnComplete',
      'toolCallCancellation',
      'goAway',
      'resumptionUpdate',
    ])
    expect(
      events.log
        .filter((e) => e.type === 'audio')
        .reduce((n, e) => n + (e.type === 'audio' ? e.bytes : 0), 0),
    ).toBe(9600)
    expect(events.log.find((e) => e.type === 'goAway')).toEqual({
      type: 'goAway',
      timeLeftMs: 30_000,
    })
  })
})
