import { afterEach, describe, expect, it } from 'vitest'
import { Closers, type Composition } from '../../src/app/compose/composition.js'
import { composeProviders } from '../../src/app/compose/providers.js'
import { parseConfig } from '../../src/app/config/load.js'
import { defaultPersona } from '../../src/core/persona.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { recorder } from '../gemini/helpers.js'
import { OPENAI_KEY } from '../openai/helpers.js'

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {})
})

/** The appliance's provider composition from a config file's text, the key env given. */
async function composed(provider: unknown, env: NodeJS.ProcessEnv) {
  const { config } = parseConfig(JSON.stringify({ provider }), 'c.json', env)
  const log = new MemoryLogger()
  const comp: Composition = { config, clock: new VirtualClock(), log, closers: new Closers(log) }
  const models = await composeProviders(comp)
  const told: string[] = []
  models.listeners.add({
    reached: (p) => told.push(`reached ${p}`),
    failed: (f) => told.push(`failed ${f.provider} ${f.reason}`),
    unreachable: (fs) => told.push(`unreachable ${fs.length}`),
  })
  return { ...models, told, log }
}

async function fakes() {
  // Gemini takes only its own key: the one configured is refused, live and REST alike.
  const gemini = await FakeLiveServer.start({ apiKey: 'the-right-gemini-key' })
  closers.push(() => gemini.close())
  const openai = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
  closers.push(() => openai.close())
  return { gemini, openai }
}

/** Gemini first, with a key it refuses; OpenAI second. */
async function revokedGeminiThenOpenai() {
  const { gemini, openai } = await fakes()
  const m = await composed(
    [
      { kind: 'gemini', baseUrl: gemini.baseUrl },
      { kind: 'openai', baseUrl: openai.baseUrl },
    ],
    { GEMINI_API_KEY: 'a-revoked-gemini-key', OPENAI_API_KEY: OPENAI_KEY },
  )
  return { gemini, openai, m }
}

const asked = { role: 'user', text: 'Who let the plumber in?', channel: 'text', at: 0 } as const
const setup = { persona: defaultPersona, tools: [], nonBlockingTools: true }

describe('the composed providers: every configured one behind the failover, in order', () => {
  it('Gemini refusing the key: sessions, typed chats and speech are answered by OpenAI', async () => {
    const { gemini, openai, m } = await revokedGeminiThenOpenai()
    const session = await (m.live.session?.() ?? m.live).open(setup, recorder())
    closers.push(() => session.close())
    expect(m.told).toEqual(['failed gemini key_refused', 'reached openai'])
    expect(openai.connections).toHaveLength(1)

    openai.queueChat({ text: 'From OpenAI.' })
    const answer = await m.llm.next(
      { persona: defaultPersona, history: [asked], tools: [] },
      new AbortController().signal,
    )
    expect(answer.text).toBe('From OpenAI.')
    const speech = await m.speech.synthesize(
      { text: 'Hello.', persona: defaultPersona },
      new AbortController().signal,
    )
    expect(speech.pcm.byteLength).toBeGreaterThan(0)
    // Gemini is resting after its refusal: the chat and the speech never asked it.
    expect(gemini.rest.filter((r) => r.method === 'POST')).toHaveLength(0)
    expect(openai.rest.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/audio/speech'])
  }, 60_000)

  it('a typed chat before any session: Gemini is asked, refuses, and OpenAI answers', async () => {
    const { gemini, openai, m } = await revokedGeminiThenOpenai()
    openai.queueChat({ text: 'From OpenAI.' })
    const answer = await m.llm.next(
      { persona: defaultPersona, history: [asked], tools: [] },
      new AbortController().signal,
    )
    expect(answer.text).toBe('From OpenAI.')
    expect(gemini.rest.filter((r) => r.method === 'POST')).toHaveLength(1)
    // A chat teaches the order nothing: only opening a session tells the status.
    expect(m.told).toEqual([])
    expect(m.log.withEvent('provider_skipped')[0]?.fields).toMatchObject({ provider: 'gemini' })
  }, 60_000)

  it('one provider: it answers as before, and the listener is told', async () => {
    const { gemini } = await fakes()
    const m = await composed(
      { baseUrl: gemini.baseUrl },
      { GEMINI_API_KEY: 'the-right-gemini-key' },
    )
    const session = await (m.live.session?.() ?? m.live).open(setup, recorder())
    closers.push(() => session.close())
    expect(m.told).toEqual(['reached gemini'])
    expect(m.live.capabilities.model).toBe('gemini-3.8-live')
    expect(m.log.withEvent('provider_chosen')[0]?.fields).toMatchObject({ provider: 'gemini' })
  }, 60_000)

  it('a configured provider without its key stops the start, naming the entry', async () => {
    await expect(
      composed([{ kind: 'gemini' }, { kind: 'openai' }], { GEMINI_API_KEY: 'k' }),
    ).rejects.toMatchObject({
      code: 'NOC_ERR_PROVIDER_NO_KEY',
      message: expect.stringMatching(/no OpenAI API key for provider\[1\]: set OPENAI_API_KEY/),
    })
  })
})
