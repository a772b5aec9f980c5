import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import type { Message } from '../../src/core/conversation.js'
import type { Clock } from '../../src/ports/clock.js'
import type { LiveSession } from '../../src/ports/live-llm.js'
import { FakeLiveServer, serverFrame } from '../../src/testing/fake-live-server/index.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { ASYNC, geminiLive, KEY, liveSetup, memoryLogger, recorder } from './helpers.js'

let server: FakeLiveServer | undefined
const sessions: LiveSession[] = []
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.close()
  await server?.close()
  server = undefined
})

function adapter(
  model = ASYNC,
  o: { connectTimeoutMs?: number; baseUrl?: string; clock?: Clock } = {},
) {
  return geminiLive({
    model,
    baseUrl: o.baseUrl ?? server?.baseUrl,
    connectTimeoutMs: o.connectTimeoutMs,
    clock: o.clock ?? realClock(),
  })
}

describe('connect', () => {
  it('times out when setupComplete never comes, and closes the socket it opened', async () => {
    server = await FakeLiveServer.start({ scripts: [{ handshake: 'ignore', steps: [] }] })
    // The deadline passes on a virtual clock once the socket is open and the setup sent: the
    // timeout ends exactly that wait, however long the SDK takes to load on a loaded machine.
    const clock = new VirtualClock()
    const opening = adapter(ASYNC, { connectTimeoutMs: 10_000, clock }).open(
      liveSetup(),
      recorder(),
    )
    opening.catch(() => {})
    // Resolves once the setup frame arrived: the adapter now waits for setupComplete.
    await server.waitForConnection(0, 60_000)
    await clock.advance(9_999)
    expect(server.timeline.some((e) => e.event === 'close')).toBe(false)
    await clock.advance(1)
    await expect(opening).rejects.toMatchObject({ code: 'NOC_ERR_LIVE_CONNECT_TIMEOUT' })
    await server.until(() => server?.timeline.some((e) => e.event === 'close'))
  })

  it('times out when the far side accepts TCP and never answers the upgrade', async () => {
    const sockets: Socket[] = []
    const tcp: Server = createServer((s) => sockets.push(s))
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()))
    const port = (tcp.address() as { port: number }).port
    try {
      const clock = new VirtualClock()
      const live = adapter(ASYNC, { clock, baseUrl: `http://127.0.0.1:${port}` })
      const opening = live.open(liveSetup(), recorder())
      opening.catch(() => {})
      while (sockets.length === 0) await new Promise((r) => setTimeout(r, 10))
      await clock.advance(10_000)
      await expect(opening).rejects.toMatchObject({ code: 'NOC_ERR_LIVE_CONNECT_TIMEOUT' })
    } finally {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => tcp.close(() => r()))
    }
  })

  it('rejects at once when nothing listens', async () => {
    const tcp = createServer()
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()))
    const port = (tcp.address() as { port: number }).port
    await new Promise<void>((r) => tcp.close(() => r()))
    const live = adapter(ASYNC, { connectTimeoutMs: 5000, baseUrl: `http://127.0.0.1:${port}` })
    await expect(live.open(liveSetup(), recorder())).rejects.toMatchObject({
      code: 'NOC_ERR_LIVE_CLOSED',
    })
  })

  it.each([
    [
      1007,
      'Request contains an invalid argument.',
      'NOC_ERR_LIVE_REJECTED',
      /refused the session setup \(close 1007\)/,
    ],
    [
      1008,
      'Operation is not implemented, or supported, or enabled.',
      'NOC_ERR_LIVE_REJECTED',
      /close 1008/,
    ],
    [
      1011,
      'Internal error occurred.',
      'NOC_ERR_LIVE_SERVER_ERROR',
      /internal error \(close 1011\)/,
    ],
    [
      1008,
      'API key not valid. Please pass a valid API key.',
      'NOC_ERR_LIVE_KEY_REFUSED',
      /key was refused/,
    ],
    [
      1011,
      'You exceeded your current quota, please check your plan and billing details.',
      'NOC_ERR_LIVE_QUOTA',
      /quota or rate limit is spent \(close 1011\)/,
    ],
    [1001, 'going away', 'NOC_ERR_LIVE_CLOSED', /before its setup completed \(close 1001\)/],
  ])(
    'an early close %i rejects open() with a clear error',
    async (code, reason, errCode, message) => {
      server = await FakeLiveServer.start({
        scripts: [{ handshake: 'ignore', steps: [{ close: code, reason }] }],
      })
      const events = recorder()
      const err = await adapter()
        .open(liveSetup(), events)
        .catch((e: unknown) => e)
      expect(err).toMatchObject({ code: errCode })
      expect((err as Error).message).toMatch(message)
      expect((err as Error).message).toContain(reason)
      expect(events.log).toEqual([]) // the rejection is the only report
    },
  )

  it('a wrong model id says so and names nocturn doctor', async () => {
    server = await FakeLiveServer.start()
    const err = await adapter('gemini-9-live-nonexistent')
      .open(liveSetup(), recorder())
      .catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'NOC_ERR_LIVE_UNKNOWN_MODEL' })
    expect((err as Error).message).toMatch(/"gemini-9-live-nonexistent" does not exist/)
    expect((err as Error).message).toContain('nocturn doctor')
  })

  it('a model id the SDK refuses after the socket opened: rejected, and that socket closed (no leak)', async () => {
    server = await FakeLiveServer.start()
    const err = await adapter('models/../x')
      .open(liveSetup(), recorder())
      .catch((e: unknown) => e)
    expect((err as Error).message).toMatch(/invalid model parameter/)
    await server.until(() => server?.timeline.some((e) => e.conn === 0 && e.event === 'close'))
  })

  it('a ws:// base URL still connects (the SDK would rewrite it to wss:// and hang)', async () => {
    server = await FakeLiveServer.start()
    const live = adapter(ASYNC, {
      baseUrl: `ws://127.0.0.1:${server.port}`,
      connectTimeoutMs: 2000,
    })
    sessions.push(await live.open(liveSetup(), recorder()))
    expect(server.connections).toHaveLength(1)
  })
})

const history: Message[] = [
  { role: 'user', text: 'Is the front door locked?', channel: 'voice', at: 1 },
  { role: 'assistant', text: 'Yes, it is locked.', toolCalls: [], channel: 'voice', at: 2 },
]

describe('resumption (the driver closes, then reopens with the handle)', () => {
  it('goAway, then resume: old socket closed first, handle in setup, history sent only the first time', async () => {
    server = await FakeLiveServer.start({
      scripts: [
        {
          steps: [
            { send: serverFrame.resumption('handle-A') },
            { send: serverFrame.resumption('', false) },
            { send: serverFrame.resumption('handle-B') },
            { send: serverFrame.goAway('50s') },
          ],
        },
      ],
    })
    const live = adapter()
    const events = recorder()
    const first = await live.open(liveSetup({ history }), events)
    await server.until(() => events.types().includes('goAway'))
    // What a driver keeps: the last handle that came with resumable=true.
    let handle: string | undefined
    for (const e of events.log) if (e.type === 'resumptionUpdate' && e.resumable) handle = e.handle
    expect(handle).toBe('handle-B')
    await first.close()
    const second = await live.open(liveSetup({ history, resumeHandle: handle }), recorder())
    sessions.push(second)
    expect(events.log.at(-1)).toEqual({
      type: 'closed',
      info: { code: 1000, reason: '', byClient: true },
    })
    const t = server.timeline
    const closedFirst = t.findIndex((e) => e.conn === 0 && e.event === 'close')
    const openedSecond = t.findIndex((e) => e.conn === 1 && e.event === 'open')
    expect(closedFirst).toBeGreaterThanOrEqual(0)
    expect(closedFirst).toBeLessThan(openedSecond)
    expect(server.connections[0]?.setup?.sessionResumption).toEqual({})
    expect(server.connections[1]?.setup?.sessionResumption).toEqual({ handle: 'handle-B' })
    expect(server.framesOf('clientContent', 0)).toEqual([
      {
        clientContent: {
          turns: [
            { role: 'user', parts: [{ text: 'Is the front door locked?' }] },
            { role: 'model', parts: [{ text: 'Yes, it is locked.' }] },
          ],
          turnComplete: false,
        },
      },
    ])
    expect(server.framesOf('clientContent', 1)).toEqual([])
    expect(server.received.filter((f) => f.conn === 1).map((f) => f.key)).toEqual(['setup'])
  })

  it('a connection dropped mid-approval: closed(1006), an answer on the dead session throws (so the driver keeps it), audio is dropped quietly, the final answer goes out after resuming', async () => {
    server = await FakeLiveServer.start({
      scripts: [
        {
          steps: [
            { send: serverFrame.resumption('handle-1') },
            {
              send: serverFrame.toolCall([
                { id: 'fc-7', name: 'unlock_door', args: { door: 'front' } },
              ]),
            },
            { waitFor: 'toolResponse' },
            { drop: true },
          ],
        },
      ],
    })
    const live = adapter()
    const events = recorder()
    const first = await live.open(liveSetup(), events)
    await server.until(() => events.types().includes('toolCall'))
    first.respond({
      id: 'fc-7',
      name: 'unlock_door',
      response: { status: 'waiting_for_approval', approver: "Anna's phone" },
      willContinue: true,
    })
    await server.until(() => events.types().includes('closed'))
    expect(events.log.at(-1)).toEqual({
      type: 'closed',
      info: { code: 1006, reason: '', byClient: false },
    })
    // The phone says yes while the connection is down: the answer is refused loudly so the
    // driver can queue it for the resumed connection; audio is simply dropped.
    expect(() =>
      first.respond({ id: 'fc-7', name: 'unlock_door', response: { ok: true } }),
    ).toThrow(/not open; the answer for call fc-7 was not sent/)
    expect(() => first.sendAudio(new Uint8Array(320))).not.toThrow()
    await first.close()
    const second = await live.open(liveSetup({ resumeHandle: 'handle-1' }), recorder())
    sessions.push(second)
    second.respond({
      id: 'fc-7',
      name: 'unlock_door',
      response: { ok: true },
      scheduling: 'INTERRUPT',
    })
    await server.until(() => server?.framesOf('toolResponse', 1).length === 1)
    expect(server.framesOf('toolResponse', 0)).toHaveLength(1)
    expect(server.framesOf('toolResponse', 1)).toEqual([
      {
        toolResponse: {
          functionResponses: [
            {
              id: 'fc-7',
              name: 'unlock_door',
              response: { ok: true },
              willContinue: false,
              scheduling: 'INTERRUPT',
            },
          ],
        },
      },
    ])
    expect(server.connections[1]?.setup?.sessionResumption).toEqual({ handle: 'handle-1' })
  })

  it('a far-side close after setup is reported once, with its code and reason', async () => {
    server = await FakeLiveServer.start({
      scripts: [{ steps: [{ close: 1011, reason: 'Internal error occurred.' }] }],
    })
    const events = recorder()
    sessions.push(await adapter().open(liveSetup(), events))
    await server.until(() => events.types().includes('closed'))
    expect(events.log).toEqual([
      { type: 'closed', info: { code: 1011, reason: 'Internal error occurred.', byClient: false } },
    ])
  })
})

describe('bad input is logged and survived', () => {
  it('non-JSON (text and binary), unknown keys, a call without an id, odd audio, goAway without timeLeft', async () => {
    server = await FakeLiveServer.start({
      scripts: [
        {
          steps: [
            { raw: 'this is not json' },
            { raw: '{"truncated": ', binary: true },
            { raw: '[1,2,3]' },
            { send: { somethingNew: { x: 1 } } },
            {
              send: {
                serverContent: { brandNewFlag: true, outputTranscription: { text: 'still here' } },
              },
            },
            {
              send: serverFrame.toolCall([
                { name: 'unlock_door', args: { door: 'front' } },
                { id: 'fc-ok', name: 'current_time' },
              ]),
            },
            { send: serverFrame.audio(new Uint8Array(480), 'audio/wav') },
            { send: serverFrame.audio(new Uint8Array(480), 'audio/pcm;rate=16000') },
            { send: serverFrame.audio(new Uint8Array(480), 'audio/pcm;rate=24000') },
            { send: serverFrame.goAway(null) },
            { send: serverFrame.turnComplete() },
          ],
        },
      ],
    })
    const { logger, parsed } = memoryLogger()
    const live = geminiLive({ baseUrl: server.baseUrl, logger })
    const events = recorder()
    sessions.push(await live.open(liveSetup(), events))
    await server.until(() => events.types().includes('turnComplete'))
    expect(events.log).toEqual([
      { type: 'outputTranscription', text: 'still here' },
      { type: 'toolCall', calls: [{ id: 'fc-ok', name: 'current_time', args: {} }] },
      { type: 'audio', bytes: 480, pcm: Buffer.alloc(480) },
      { type: 'goAway', timeLeftMs: undefined },
      { type: 'turnComplete' },
    ])
    const warnings = parsed()
      .filter((l) => l.level === 40)
      .map((l) => l.event)
    expect(warnings).toEqual(
      expect.arrayContaining([
        'frame_not_json',
        'frame_not_object',
        'frame_unknown_key',
        'call_without_id',
        'audio_bad_format',
        'go_away_unreadable',
      ]),
    )
    expect(warnings.filter((m) => m === 'frame_not_json')).toHaveLength(2)
    expect(warnings.filter((m) => m === 'audio_bad_format')).toHaveLength(2)
    const unknown = parsed().filter((l) => l.event === 'frame_unknown_key')
    expect(unknown.map((l) => l.field)).toEqual(['somethingNew', 'serverContent.brandNewFlag'])
  })

  it('the API key never reaches a log line or an error, even when a close reason quotes the URL', async () => {
    server = await FakeLiveServer.start({
      scripts: [
        {
          steps: [
            { send: serverFrame.resumption('h') },
            { waitFor: 'realtimeInput' },
            { drop: true },
          ],
        },
        { handshake: 'ignore', steps: [{ close: 1008, reason: `bad request /ws/x?key=${KEY}` }] },
      ],
    })
    expect(server.urls).toEqual([])
    const { logger, lines } = memoryLogger()
    const live = geminiLive({ baseUrl: server.baseUrl, logger })
    const events = recorder()
    const s = await live.open(liveSetup(), events)
    s.sendAudio(new Uint8Array(320))
    await server.until(() => events.types().includes('closed'))
    const err = await live
      .open(liveSetup({ resumeHandle: 'h' }), recorder())
      .catch((e: unknown) => e)
    expect(String((err as Error).message)).toContain('key=[redacted]')
    expect(String((err as Error).message)).not.toContain(KEY)
    // The SDK did put the key in the URL: the fake server saw it.
    expect(server.urls[0]).toContain(`key=${KEY}`)
    expect(lines.length).toBeGreaterThan(3)
    for (const line of lines) expect(line).not.toContain(KEY)
  })
})

describe('a far side that speaks before setup (the SDK would crash on a TDZ ReferenceError)', () => {
  it('an early setupComplete and an early event: the connection opens, the event arrives after open()', async () => {
    server = await FakeLiveServer.start({
      beforeSetup: [serverFrame.setupComplete(), serverFrame.resumption('early-handle')],
      scripts: [{ handshake: 'ignore', steps: [] }],
    })
    const events = recorder()
    const s = await adapter(ASYNC, { connectTimeoutMs: 2000 }).open(liveSetup(), events)
    sessions.push(s)
    await server.until(() => events.log.length === 1)
    expect(events.log).toEqual([
      { type: 'resumptionUpdate', handle: 'early-handle', resumable: true },
    ])
  })
})
