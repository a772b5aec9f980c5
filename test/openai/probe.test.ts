import { afterEach, describe, expect, it } from 'vitest'
import { PROBE_TOOL } from '../../src/adapters/live-support/tool-call-probe.js'
import { probeRealtimeToolCalls } from '../../src/adapters/openai/probe.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { OPENAI_KEY } from './helpers.js'

let server: FakeRealtimeServer | undefined
afterEach(async () => server?.close())

/** The fake model calls the test tool when asked, and says a sentence when asked again. */
const replies = [{ calls: [{ name: PROBE_TOOL }] }, { text: 'Still here, while it runs.' }]

describe('doctor --probe: a call made to block tells an asynchronous model from a sequential one', () => {
  it('a model that keeps talking while the call has no output is asynchronous', async () => {
    server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY, replies })
    const r = await probeRealtimeToolCalls({
      apiKey: OPENAI_KEY,
      model: 'gpt-realtime',
      baseUrl: server.baseUrl,
      holdMs: 2000,
    })
    expect(r.verdict).toBe('asynchronous')
    const conn = server.connections[0]
    // The call never got its output: the model spoke with it still pending.
    expect(conn?.outputs).toEqual([])
    expect(conn?.session).toMatchObject({
      output_modalities: ['text'],
      tools: [expect.objectContaining({ name: PROBE_TOOL })],
    })
  })

  it('a model that says nothing until the output arrives is sequential (the fake’s blocking mode)', async () => {
    server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY, replies, toolCalls: 'blocking' })
    const r = await probeRealtimeToolCalls({
      apiKey: OPENAI_KEY,
      model: 'gpt-realtime',
      baseUrl: server.baseUrl,
      holdMs: 500,
    })
    expect(r).toMatchObject({ verdict: 'sequential' })
    expect(r.heldMs).toBeGreaterThanOrEqual(500)
  })
})
