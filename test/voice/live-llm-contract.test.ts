import { realClock } from '../../src/adapters/clock/real-clock.js'
import { silentLogger } from '../../src/core/logger.js'
import type { LiveLLM } from '../../src/ports/live-llm.js'
import { FakeLiveLLM } from '../../src/testing/fake-live-llm.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { FailoverLive } from '../../src/voice/failover-live.js'
import { ProviderOrder } from '../../src/voice/provider-order.js'
import { geminiLive } from '../gemini/helpers.js'
import { openaiRealtime } from '../openai/helpers.js'
import { liveSessionContract } from './live-llm-contract.js'

liveSessionContract('GeminiLive (the real SDK) against the fake Live server', async () => {
  const server = await FakeLiveServer.start()
  const llm = geminiLive({ baseUrl: server.baseUrl })
  const conn = () => server.waitForConnection(server.connections.length - 1)
  /** Everything the client sent has arrived once the server has seen the connection close. */
  const closed = async () => {
    const c = await conn()
    await server.until(() => server.timeline.some((e) => e.conn === c.index && e.event === 'close'))
    return c
  }
  return {
    llm,
    toolCall: async (id) => (await conn()).toolCall({ id, name: 'current_time' }),
    drop: async () => (await conn()).drop(),
    audioBytes: async () => {
      const c = await closed()
      return server
        .framesOf('realtimeInput', c.index)
        .map((f) => (f.realtimeInput as { audio?: { data: string } }).audio?.data ?? '')
        .reduce((n, d) => n + Buffer.from(d, 'base64').length, 0)
    },
    responses: async () => (await closed()).responses,
    dispose: () => server.close(),
  }
})

/** The contract's handles on a session the fake Realtime service holds (OpenAI, directly or not). */
function realtimeHandles(server: FakeRealtimeServer, llm: LiveLLM, dispose: () => Promise<void>) {
  const conn = () => server.waitForConnection(server.connections.length - 1)
  const closed = async () => {
    const c = await conn()
    await server.until(() => !c.open)
    return c
  }
  return {
    llm,
    toolCall: async (id: string) =>
      (await conn()).reply({ calls: [{ callId: id, name: 'current_time' }] }),
    drop: async () => (await conn()).drop(),
    // Sent at 24 kHz: counted as the 16 kHz bytes given.
    audioBytes: async () => (await closed()).heardMs * 32,
    // A second answer to a call goes as the call's own second report (`<id>_final`): still its answer.
    responses: async () =>
      (await closed()).outputs.map((o) => ({ id: o.callId.replace(/_final$/, '') })),
    dispose,
  }
}

liveSessionContract(
  'OpenAIRealtime (the real openai package) against the fake Realtime service',
  async () => {
    const server = await FakeRealtimeServer.start()
    return realtimeHandles(server, openaiRealtime({ baseUrl: server.baseUrl }), () =>
      server.close(),
    )
  },
)

liveSessionContract(
  'FakeLiveLLM, the scripted model the voice tests and the offline run use',
  async () => {
    const llm = new FakeLiveLLM()
    return {
      llm,
      toolCall: async (id) => llm.current.toolCall({ id, name: 'current_time', args: {} }),
      drop: async () => llm.current.drop(),
      audioBytes: async () => llm.current.audioBytes,
      responses: async () => llm.current.responses,
      dispose: async () => undefined,
    }
  },
)

liveSessionContract(
  'FailoverLive: a Gemini that refuses the key, then OpenAIRealtime (the real SDKs, the fakes)',
  async () => {
    const refusing = await FakeLiveServer.start({ refuse: 'key' })
    const server = await FakeRealtimeServer.start()
    const none = () => {}
    const llm = new FailoverLive(
      [geminiLive({ baseUrl: refusing.baseUrl }), openaiRealtime({ baseUrl: server.baseUrl })],
      new ProviderOrder({
        names: ['gemini', 'openai'],
        clock: realClock(),
        log: silentLogger,
        listener: { reached: none, failed: none, unreachable: none },
      }),
    )
    return realtimeHandles(server, llm, async () => {
      await Promise.all([server.close(), refusing.close()])
    })
  },
)
