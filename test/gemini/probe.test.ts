import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { probeGeminiToolCalls } from '../../src/adapters/gemini/probe.js'
import { PROBE_TOOL } from '../../src/adapters/live-support/tool-call-probe.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { KEY, probeScript } from './helpers.js'

let server: FakeLiveServer | undefined
afterEach(async () => server?.close())

const probe = (model: string, holdMs: number, timeoutMs?: number) =>
  probeGeminiToolCalls({
    apiKey: KEY,
    model,
    baseUrl: server?.baseUrl,
    holdMs,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    logger: silentLogger,
    clock: realClock(),
  })

describe('doctor --probe on Gemini Live: a call made to block tells an asynchronous model from a sequential one', () => {
  it('a model that keeps talking while the call has no response is asynchronous', async () => {
    server = await FakeLiveServer.start({ apiKey: KEY, scripts: probeScript })
    const r = await probe('gemini-3.8-live', 2000)
    expect(r.verdict).toBe('asynchronous')
    const conn = server.connections[0]
    // The call never got its response: the model spoke with it still pending.
    expect(conn?.responses).toEqual([])
    // Declared as the appliance declares its tools on this model: non-blocking.
    expect(JSON.stringify(conn?.setup?.tools)).toContain(`"name":"${PROBE_TOOL}"`)
    expect(JSON.stringify(conn?.setup?.tools)).toContain('"behavior":"NON_BLOCKING"')
    expect(server.framesOf('realtimeInput').map((f) => f.realtimeInput)).toEqual([
      { text: `Please call ${PROBE_TOOL} now.` },
      { text: 'While that runs, say one short sentence.' },
    ])
  })

  it('a model that says nothing until the call has its response is sequential (the fake’s blocking mode)', async () => {
    server = await FakeLiveServer.start({
      apiKey: KEY,
      scripts: probeScript,
      toolCalls: 'blocking',
    })
    const r = await probe('gemini-3.8-live', 500)
    expect(r).toMatchObject({ verdict: 'sequential' })
    // The whole hold, as the wall clock saw it: the hold's timer counts from the event loop's
    // cached time, which may be a ms before the probe read the clock (a CI run saw 499 of 500).
    expect(r.heldMs).toBeGreaterThanOrEqual(499)
    await server.until(() => server?.timeline.some((t) => t.event === 'close'))
    expect(server.framesOf('toolResponse')).toEqual([])
  })

  it('a model that never calls the tool says so; a refused key fails without the key in the message', async () => {
    server = await FakeLiveServer.start({ apiKey: KEY })
    await expect(probe('gemini-3.8-live', 200, 1000)).resolves.toMatchObject({ verdict: 'no call' })
    const wrong = probeGeminiToolCalls({
      apiKey: 'AIzaSyWRONG-key-0123456789',
      model: 'gemini-3.8-live',
      baseUrl: server.baseUrl,
      logger: silentLogger,
      clock: realClock(),
    })
    await expect(wrong).rejects.toThrow(/API key not valid/)
    await expect(wrong).rejects.not.toThrow(/AIzaSyWRONG/)
  })
})
