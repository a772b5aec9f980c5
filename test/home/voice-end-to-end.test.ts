import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MicGate } from '../../src/audio/mic-gate.js'
import { defaultPersona } from '../../src/core/persona.js'
import type { VerifiedRequest } from '../../src/protocol/phone-side.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VoiceDriver } from '../../src/voice/voice-driver.js'
import { geminiLive } from '../gemini/helpers.js'
import { mosquittoBroker } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { brokerWithWorlds } from '../helpers/worlds.js'
import { deviceWorld } from '../mqtt/fixture.js'
import { TestMic } from '../voice/harness.js'
import { homeWorld } from './world.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/**
 * Home Assistant by voice, every part real but the model and HA: the `@google/genai` SDK against
 * the fake Live server, the gate asking over a real Mosquitto, the reference phone verifying and
 * answering, and the adapter on the stand-in HA (MCP over Streamable HTTP, the WebSocket API).
 */
describe.skipIf(skip)('Home Assistant by voice, with a phone on a real broker', () => {
  const worlds = brokerWithWorlds((port) => mosquittoBroker(port), deviceWorld)
  let server: FakeLiveServer | undefined
  let home: Awaited<ReturnType<typeof homeWorld>> | undefined
  let driver: VoiceDriver | undefined
  let done: Promise<unknown> | undefined

  afterEach(async () => {
    await driver?.stop()
    await done
    await home?.close()
    await server?.close()
    driver = undefined
  })

  async function speaker() {
    const w = await worlds.open()
    home = await homeWorld({ area: 'Kitchen' })
    const anna = await w.phone('anna')
    server = await FakeLiveServer.start()
    const clock = realClock()
    const out = new FakeSpeaker(clock)
    const mic = new MicGate({
      source: new TestMic(),
      speaker: out,
      clock,
      echo: 'aec',
      tailMs: 300,
    })
    const log = new MemoryLogger()
    driver = new VoiceDriver({
      llm: geminiLive({ baseUrl: server.baseUrl, logger: log }),
      tools: home.tools,
      gate: w.gate,
      store: w.store,
      persona: defaultPersona,
      clock,
      logger: log,
      mic,
      speaker: out,
      options: { idleMs: 10 * 60_000, budgetMs: 30 * 60_000 },
    })
    done = driver.runSession()
    const conn = await server.waitForConnection(0)
    const ha = home.ha
    const calls = () =>
      ha.house.calls.map((c) => `${c.via} ${c.domain}.${c.service} ${c.entityIds.join(',')}`)
    /** The model's call, and (when the phone is asked) what the phone verified and showed. */
    const ask = async (id: string, name: string, args: Record<string, unknown>) => {
      const before = conn.responses.filter((r) => r.id === id).length
      conn.toolCall({ id, name, args })
      return { before }
    }
    const finalOf = async (id: string) =>
      (await server?.until(
        () => conn.responses.find((r) => r.id === id && r.willContinue !== true),
        8000,
      )) as { response: { output?: Record<string, unknown>; error?: string } }
    const shown = async (): Promise<VerifiedRequest> => {
      const approvalId = await w.nextRequest(anna)
      return anna.waitFor(approvalId)
    }
    return { w, anna, conn, ha, calls, ask, finalOf, shown, out }
  }

  it('offers HA’s tools beside the built-ins, in schemas the model accepts, and switches a light with no phone', async () => {
    const s = await speaker()
    const setup = s.conn.setup as {
      tools: { functionDeclarations: { name: string; parameters?: unknown }[] }[]
    }
    const names = setup.tools.flatMap((t) => t.functionDeclarations.map((d) => d.name))
    expect(names).toEqual(
      expect.arrayContaining([
        'intent__HassTurnOn',
        'intent__HassTurnOff',
        'homeassistant__GetLiveContext',
      ]),
    )
    expect(JSON.stringify(setup.tools)).not.toMatch(/anyOf|"format"/)
    s.conn.user('Turn on the kitchen light.')
    await s.ask('c1', 'intent__HassTurnOn', { name: 'Kitchen Light' })
    const final = await s.finalOf('c1')
    expect(final.response.output).toMatchObject({
      done: true,
      confirmed: true,
      result: 'Kitchen Light is on.',
    })
    expect(s.w.asked).toEqual([])
    expect(s.calls()).toEqual(['websocket homeassistant.turn_on light.kitchen'])
    expect(s.ha.house.entity('light.kitchen')?.state).toBe('on')
  })

  it('"unlock the front door": a signed request naming Front Door, the yes, lock.unlock on lock.front_door alone, and the model told it is unlocked', async () => {
    const s = await speaker()
    s.conn.user('Unlock the front door.')
    await s.ask('c1', 'intent__HassTurnOff', { name: 'front door' })
    const card = await s.shown()
    expect(card).toMatchObject({
      tool: 'intent__HassTurnOff',
      action: 'Unlock Front Door — Hall',
      critical: true,
      targets: ['lock.front_door'],
    })
    expect(s.calls()).toEqual([])
    await s.anna.decide(card.id, 'approve', 'once')
    const final = await s.finalOf('c1')
    expect(final.response.output).toMatchObject({
      done: true,
      confirmed: true,
      result: 'Front Door is unlocked.',
    })
    expect(s.calls()).toEqual(['websocket lock.unlock lock.front_door'])
    expect(s.ha.house.entity('lock.back_door')?.state).toBe('locked')
  })

  it('"lock the front door" needs no phone; "open the garage" and "unlock everything" do, the card listing every lock', async () => {
    const s = await speaker()
    await s.ask('c1', 'intent__HassTurnOn', { name: 'Front Door' })
    await s.finalOf('c1')
    expect(s.w.asked).toEqual([])
    expect(s.calls()).toEqual(['websocket lock.lock lock.front_door'])

    await s.ask('c2', 'intent__HassTurnOn', { name: 'garage door' })
    const garage = await s.shown()
    expect(garage).toMatchObject({
      action: 'Open Garage Door — Garage',
      critical: true,
      targets: ['cover.garage_door'],
    })
    await s.anna.decide(garage.id, 'deny', 'once')
    expect((await s.finalOf('c2')).response.error).toMatch(/said no/)

    await s.ask('c3', 'intent__HassTurnOff', { domain: ['lock'] })
    const sweep = await s.shown()
    expect(sweep).toMatchObject({
      action: 'Unlock Front Door — Hall, Back Door — Garden',
      critical: true,
      targets: ['lock.front_door', 'lock.back_door'],
    })
    await s.anna.decide(sweep.id, 'deny', 'once')
    await s.finalOf('c3')
    expect(s.calls()).toEqual(['websocket lock.lock lock.front_door'])
  })

  it('a name that matches two lamps, and a script not marked safe, each ask a phone', async () => {
    const s = await speaker()
    await s.ask('c1', 'intent__HassTurnOn', { name: 'lamp' })
    const lamps = await s.shown()
    expect(lamps).toMatchObject({
      critical: true,
      targets: ['light.bedroom_lamp', 'light.living_room_lamp'],
    })
    await s.anna.decide(lamps.id, 'deny', 'once')
    await s.finalOf('c1')
    await s.ask('c2', 'script__open_up', {})
    const script = await s.shown()
    expect(script).toMatchObject({
      action: 'Run Open Up — Hall',
      critical: true,
      targets: ['script.open_up'],
    })
    await s.anna.decide(script.id, 'deny', 'once')
    await s.finalOf('c2')
    expect(s.calls()).toEqual([])
  })

  it('the front door renamed between the request and the yes: refused, nothing unlocked', async () => {
    const s = await speaker()
    await s.ask('c1', 'intent__HassTurnOff', { name: 'Front Door' })
    const card = await s.shown()
    s.ha.house.rename('lock.front_door', 'Garden Gate Lock')
    await s.anna.decide(card.id, 'approve', 'once')
    const final = await s.finalOf('c1')
    expect(final.response.error).toMatch(/Front Door was renamed or moved .* so I did nothing/)
    expect(s.calls()).toEqual([])
    expect(s.ha.house.entity('lock.front_door')?.state).toBe('locked')
  })

  it("a slow HA holds nothing up: the model's speech reaches the speaker while the call waits, its answer comes after", async () => {
    const s = await speaker()
    s.ha.slow(1500)
    await s.ask('c1', 'light__HassLightSet', { name: 'Kitchen Light', brightness: 60 })
    s.conn.model('One moment.')
    s.conn.audio(400)
    await until(() => s.out.writtenBytes >= 400 * 48, 'the reply to reach the speaker')
    expect(s.conn.responses.filter((r) => r.id === 'c1')).toEqual([])
    expect((await s.finalOf('c1')).response.output).toMatchObject({ response_type: 'action_done' })
  })

  it('HA down, then its token revoked: each call answered with a sentence, the session goes on', async () => {
    const s = await speaker()
    s.ha.revokeToken()
    await s.ask('c1', 'intent__HassTurnOn', { name: 'Kitchen Light' })
    expect((await s.finalOf('c1')).response.error).toMatch(/refused the speaker's access token/)
    await s.ha.stop()
    await s.ask('c2', 'intent__HassTurnOn', { name: 'Kitchen Light' })
    expect((await s.finalOf('c2')).response.error).toMatch(/can't reach Home Assistant/)
    // The built-in path is untouched: the session still answers and is still open.
    await until(() => s.conn.open, 'the connection to stay open')
    expect(s.calls()).toEqual([])
  })
})
