import { afterEach, describe, expect, it } from 'vitest'
import type { LiveLLM } from '../../src/ports/live-llm.js'
import type { ProviderFailure, ProviderListener } from '../../src/ports/provider-listener.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { FailoverLive } from '../../src/voice/failover-live.js'
import { ProviderOrder } from '../../src/voice/provider-order.js'
import { geminiLive } from '../gemini/helpers.js'
import { coreFixture } from '../helpers/core.js'
import { until } from '../helpers/wait.js'
import { OPENAI_KEY, openaiRealtime } from '../openai/helpers.js'
import { realSdkWorld } from './harness.js'

const closers: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c().catch(() => {})
})

/** What the listener was told, in order, as short lines. */
function toldListener(): ProviderListener & { told: string[]; failures: ProviderFailure[][] } {
  const told: string[] = []
  const failures: ProviderFailure[][] = []
  return {
    told,
    failures,
    reached: (p) => told.push(`reached ${p}`),
    failed: (f) => told.push(`failed ${f.provider} ${f.reason}`),
    unreachable: (fs) => {
      failures.push([...fs])
      told.push(`unreachable ${fs.map((f) => f.provider).join(',')}`)
    },
  }
}

/**
 * The real `@google/genai` against a fake Live service that refuses the key, the real `openai`
 * package against the fake Realtime service, both behind the failover, under the voice driver.
 */
async function twoProviders(openaiRefuses?: 429) {
  const gemini = await FakeLiveServer.start({ refuse: 'key' })
  closers.push(() => gemini.close())
  const openai = await FakeRealtimeServer.start(
    openaiRefuses ? { refuse: openaiRefuses } : { apiKey: OPENAI_KEY },
  )
  closers.push(() => openai.close())
  const log = new MemoryLogger()
  const core = coreFixture({ timeoutMs: 120_000 })
  const listener = toldListener()
  const order = new ProviderOrder({
    names: ['gemini', 'openai'],
    clock: core.clock,
    log,
    listener,
  })
  const live = new FailoverLive(
    [
      geminiLive({ baseUrl: gemini.baseUrl, logger: log }),
      openaiRealtime({ baseUrl: openai.baseUrl, logger: log, clock: core.clock }),
    ],
    order,
  )
  const world = await realSdkWorld(log, live, core)
  closers.push(async () => world.driver.stop())
  return { gemini, openai, listener, live, world, log }
}

/** Ends the running session and starts the next one. */
async function nextSession(w: Awaited<ReturnType<typeof twoProviders>>['world']) {
  await w.driver.stop()
  await w.done
  return w.driver.runSession()
}

describe('failover between live providers, over the real SDKs and the fakes', () => {
  it('a refused Gemini key: the session opens on OpenAI; Gemini rests, then is first again', async () => {
    const { gemini, openai, listener, world, log } = await twoProviders()
    const first = await openai.waitForConnection(0)
    await openai.until(() => first.eventsOf('session.update').length > 0)
    // Gemini was asked first and refused the key at its setup; OpenAI answered.
    await until(() => listener.told.length === 2, 'the session open on OpenAI')
    expect(gemini.connections).toHaveLength(1)
    expect(listener.told).toEqual(['failed gemini key_refused', 'reached openai'])
    expect(log.withEvent('provider_chosen')[0]?.fields).toMatchObject({
      provider: 'openai',
      preference: 2,
      failedBefore: 1,
    })

    // The key is fixed; but Gemini is resting: the next session goes straight to OpenAI.
    gemini.refuse = undefined
    const second = nextSession(world)
    await openai.waitForConnection(1)
    await until(() => listener.told.length === 3, 'the second session open')
    expect(gemini.connections).toHaveLength(1)
    expect(listener.told.at(-1)).toBe('reached openai')

    // After the rest the preferred provider is tried first again, and answers.
    await world.clock.advance(30_000)
    await world.driver.stop()
    await second
    const third = world.driver.runSession()
    await gemini.waitForConnection(1)
    await until(() => listener.told.length === 4, 'Gemini reached')
    expect(listener.told.slice(2)).toEqual(['reached openai', 'reached gemini'])
    expect(openai.connections).toHaveLength(2)
    await world.driver.stop()
    await third
  }, 60_000)

  it('a session opened on the second provider stays there when its connection drops, whoever is back', async () => {
    const { gemini, openai, listener, world } = await twoProviders()
    const conn = await openai.waitForConnection(0)
    await openai.until(() => conn.eventsOf('session.update').length > 0)
    gemini.refuse = undefined
    await world.clock.advance(60_000) // Gemini's rest is long over: a new session would take it
    conn.close(1011, 'server error')
    // The session reconnects — to OpenAI, the provider it opened on, never to Gemini.
    const again = await openai.waitForConnection(1, 10_000)
    await openai.until(() => again.eventsOf('session.update').length > 0)
    await settle()
    expect(gemini.connections).toHaveLength(1)
    // The reconnection is an attempt like any: told, on the session's own provider.
    await until(() => listener.told.length === 3, 'the reconnection told')
    expect(listener.told).toEqual(['failed gemini key_refused', 'reached openai', 'reached openai'])
    expect(world.driver.sessionRunning).toBe(true)

    // OpenAI goes away mid-session: the session still never turns to Gemini, and the failure is
    // told (the room hears why) rather than the session going quiet.
    await openai.close()
    await until(() => listener.told.includes('unreachable openai'), 'the lost provider told')
    expect(listener.told.slice(3, 5)).toEqual(['failed openai offline', 'unreachable openai'])
    expect(gemini.connections).toHaveLength(1)
  }, 60_000)

  it('a Gemini that never answers the setup: after the connect timeout, OpenAI', async () => {
    const silent = await FakeLiveServer.start({
      scripts: () => ({ handshake: 'ignore', steps: [] }),
    })
    closers.push(() => silent.close())
    const openai = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
    closers.push(() => openai.close())
    const log = new MemoryLogger()
    const core = coreFixture()
    const listener = toldListener()
    const live = new FailoverLive(
      [
        geminiLive({ baseUrl: silent.baseUrl, logger: log, clock: core.clock }),
        openaiRealtime({ baseUrl: openai.baseUrl, logger: log, clock: core.clock }),
      ],
      new ProviderOrder({ names: ['gemini', 'openai'], clock: core.clock, log, listener }),
    )
    const world = await realSdkWorld(log, live, core)
    closers.push(async () => world.driver.stop())
    await silent.waitForConnection(0)
    await settle()
    expect(openai.connections).toHaveLength(0)
    await world.clock.advance(10_000) // the adapter's connect timeout, on the virtual clock
    await until(() => listener.told.length === 2, 'the session open on OpenAI')
    expect(listener.told).toEqual(['failed gemini timeout', 'reached openai'])
  }, 60_000)

  it('the session runs with the capabilities of the provider it opened on, not of the first', async () => {
    // A synchronous model first (its tools may not be non-blocking), refusing; an async one next.
    const sync = await FakeLiveServer.start({ refuse: 'quota' })
    closers.push(() => sync.close())
    const async = await FakeLiveServer.start()
    closers.push(() => async.close())
    const log = new MemoryLogger()
    const core = coreFixture()
    const listener = toldListener()
    const order = new ProviderOrder({
      names: ['gemini', 'gemini'],
      clock: core.clock,
      log,
      listener,
    })
    const live: LiveLLM = new FailoverLive(
      [
        geminiLive({ baseUrl: sync.baseUrl, model: 'gemini-3.1-flash-live-preview', logger: log }),
        geminiLive({ baseUrl: async.baseUrl, logger: log }),
      ],
      order,
    )
    expect(live.capabilities.asyncToolCalls).toBe(false)
    const world = await realSdkWorld(log, live, core)
    closers.push(async () => world.driver.stop())
    const conn = await async.waitForConnection(0)
    await until(() => listener.told.length === 2, 'the session open on the second')
    const tools = (
      (conn.setup?.tools ?? []) as { functionDeclarations?: { behavior?: string }[] }[]
    )
      .flatMap((t) => t.functionDeclarations ?? [])
      .map((d) => d.behavior)
    expect(tools.length).toBeGreaterThan(0)
    expect(new Set(tools)).toEqual(new Set(['NON_BLOCKING']))
    expect(listener.told).toEqual(['failed gemini quota', 'reached gemini'])
  }, 60_000)

  it('none can be reached: every failure is told, in order, and the session ends in error', async () => {
    const { listener, world, log } = await twoProviders(429)
    await until(() => listener.told.length === 3, 'both refusals')
    let ended = false
    void world.done.then(() => {
      ended = true
    })
    // The session's end waits its drain on the virtual clock.
    while (!ended) {
      await settle()
      await world.clock.advance(1000)
    }
    const summary = await world.done
    expect(summary.reason).toBe('error')
    expect(listener.told).toEqual([
      'failed gemini key_refused',
      'failed openai quota',
      'unreachable gemini,openai',
    ])
    expect(listener.failures[0]?.map((f) => f.detail).join(' ')).not.toContain(OPENAI_KEY)
    expect(log.withEvent('provider_unreachable')).toHaveLength(1)
  }, 60_000)
})
