import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { HOUSEHOLD_ACTIONS, householdScene } from '../../src/app/household-scene.js'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { silentLogger } from '../../src/core/logger.js'
import { PhoneClient, type PhoneEvent } from '../../src/phone/client.js'
import { PhoneConversations } from '../../src/phone/conversations.js'
import { FakeLiveServer, phrase } from '../../src/testing/fake-live-server/index.js'
import { freePort, mosquittoBroker, type TestBroker, USERS } from '../helpers/brokers.js'
import { testPhoneLink } from '../helpers/device-mqtt.js'
import {
  kitchenPairing,
  type NocturnProcess,
  startNocturnRun,
  writeRunConfig,
} from '../helpers/nocturn-process.js'
import { missingCommands } from '../helpers/system.js'

const ROOT = join(import.meta.dirname, '../..')
const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/**
 * The appliance as a household runs it: `nocturn run` as its own process, with a config file, the
 * fake Live service standing in for Gemini, WAV files for microphone and speaker, a real Mosquitto
 * with a password file and ACL, and the reference phone client answering.
 */
describe.skipIf(skip)('nocturn run, end to end', () => {
  let broker: TestBroker
  let server: FakeLiveServer
  let nocturn: NocturnProcess | undefined
  let work: string
  let chat: { role: string; text?: string; toolName?: string }[] = []
  let typed = { conversation: '', text: '' }
  const phoneSaw: PhoneEvent[] = []
  const house: string[] = []
  const closers: (() => Promise<unknown> | unknown)[] = []

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'nocturn-run-'))
    broker = mosquittoBroker(await freePort(), {
      extraAcl: [
        // The household lets Nocturn command its lock and garage, and the house read them.
        `user ${USERS.device.username}`,
        'topic write home/#',
        `user ${USERS.intruder.username}`,
        'topic read home/#',
      ],
    })
    await broker.start()
    closers.push(() => broker.stop())
    server = await FakeLiveServer.start({
      scripts: [householdScene()],
      generate: [{ text: 'Anna let the plumber in from her phone.' }],
      logger: silentLogger,
    })
    closers.push(() => server.close())

    const anna = new PhoneKeyStore(join(work, 'phones')).add('anna', "Anna's phone")
    const phone = new PhoneClient({
      link: testPhoneLink,
      pairing: kitchenPairing(broker.url, anna.key),
      ...USERS.phone,
      logger: silentLogger,
    })
    phone.on((e) => {
      phoneSaw.push(e)
      // Anna approves the front door after reading it; she never gets to the garage.
      if (e.kind === 'pending' && e.request.tool === 'unlock_front_door') {
        setTimeout(() => void phone.decide(e.request.id, 'approve', 'once').catch(() => {}), 1000)
      }
    })
    await phone.start()
    closers.push(() => phone.close())

    const houseConn = new MqttConnection({
      url: broker.url,
      clientId: 'house',
      username: USERS.intruder.username,
      password: USERS.intruder.password,
      logger: silentLogger,
      clock: realClock(),
    })
    houseConn.onMessage((topic, payload) => house.push(`${topic} ${payload.toString()}`))
    houseConn.start()
    await houseConn.ready()
    await houseConn.subscribe(['home/#'])
    closers.push(() => houseConn.close())

    const config = writeRunConfig(
      work,
      {
        baseUrl: server.baseUrl,
        inputWav: join(ROOT, 'fixtures/offline/unlock-request.wav'),
        brokerUrl: broker.url,
      },
      {
        // Only the quiet room ends this session (`run` has no other end). The scene's longest
        // pause is 1.2 s; the idle time stays well clear of it on a machine stalled by load, and
        // it only runs while the model can hear (docs/voice-driver.md, Idle).
        session: { idleTimeoutSeconds: 5, approvalTimeoutSeconds: 30 },
        homeActions: HOUSEHOLD_ACTIONS,
      },
    )
    // Secrets travel in the environment, never in argv.
    nocturn = startNocturnRun(config, { apiKey: 'e2e-key-not-for-logs' })
    const closed = await nocturn.waitForEvent('session_closed')
    // A session that ended before anyone was heard fails every test below: say so once, with why.
    if (closed.turns === 0) {
      throw new Error(`the session closed before the scene played:\n${nocturn.tail()}`)
    }
    // Later, on Anna's phone (her own broker user, so only she reads her replies): the spoken
    // session is listed, read, and continued by typing, while the appliance runs.
    const convs = new PhoneConversations({
      link: testPhoneLink,
      pairing: kitchenPairing(broker.url, anna.key),
      ...USERS.anna,
      logger: silentLogger,
    })
    await convs.start()
    closers.push(() => convs.close())
    const [spoken] = (await convs.list()).conversations
    chat = (await convs.showAll(String(spoken?.id))) as typeof chat
    typed = await convs.say(String(spoken?.id), 'Who let the plumber in?')
    expect((await nocturn.stop()).code).toBe(0)
  }, 90_000)

  afterAll(async () => {
    await nocturn?.stop('SIGKILL')
    for (const c of closers.reverse()) await Promise.resolve(c()).catch(() => {})
  })

  it('the phone saw the unlock and the garage, approved one, and saw the other withdrawn', () => {
    const pending = phoneSaw.flatMap((e) => (e.kind === 'pending' ? [e.request] : []))
    expect(pending.map((r) => [r.tool, r.action, r.channel])).toEqual([
      ['unlock_front_door', 'unlock the front door', 'voice'],
      ['open_garage', 'open the garage door', 'voice'],
    ])
    const outcomes = phoneSaw.flatMap((e) => (e.kind === 'outcome' ? [e.outcome.state] : []))
    expect(outcomes).toEqual(['approved', 'withdrawn'])
    expect(house).toEqual(['home/front-door/set {"state":"UNLOCK"}'])
  })

  it('the model received an interim, then one final with INTERRUPT, and nothing final for the withdrawn call', () => {
    const setup = server.framesOf('setup')[0] as {
      setup: { tools: { functionDeclarations: { behavior?: string }[] }[] }
    }
    const declared = setup.setup.tools.flatMap((t) => t.functionDeclarations)
    expect(declared.length).toBeGreaterThan(0)
    expect(declared.every((d) => d.behavior === 'NON_BLOCKING')).toBe(true)
    const responses = server
      .framesOf('toolResponse')
      .flatMap(
        (f) =>
          (f as { toolResponse: { functionResponses: Record<string, unknown>[] } }).toolResponse
            .functionResponses,
      )
    expect(responses.map((r) => [r.id, r.name, r.willContinue, r.scheduling ?? null])).toEqual([
      ['call-1', 'unlock_front_door', true, 'WHEN_IDLE'],
      ['call-1', 'unlock_front_door', false, 'INTERRUPT'],
      ['call-2', 'open_garage', true, 'WHEN_IDLE'],
    ])
    expect(responses[0]?.response).toEqual({
      status: 'waiting_for_approval',
      approver: "Anna's phone",
      action: 'unlock the front door',
    })
  })

  it('the speaker WAV holds the replies that played and not the reply cut by the barge-in', () => {
    const wav = readFileSync(join(work, 'speaker.wav'))
    expect(wav.subarray(0, 4).toString()).toBe('RIFF')
    const data = wav.subarray(44)
    expect(data.indexOf(phrase('waiting').pcm)).toBeGreaterThanOrEqual(0)
    expect(data.indexOf(phrase('unlocked').pcm)).toBeGreaterThanOrEqual(0)
    // The long answer was dropped when the person spoke: its end never reached the speaker.
    expect(data.indexOf(phrase('hello').pcm.subarray(-4800))).toBe(-1)
  })

  it("the spoken session is read on Anna's phone as stored, and continued by typing with its whole history", () => {
    const lines = chat.map((m) =>
      m.role === 'tool' ? `tool ${m.toolName}` : `${m.role} ${m.text}`,
    )
    expect(lines).toContain('user Please unlock the front door for the plumber.')
    expect(lines).toContain('tool unlock_front_door')
    expect(lines).toContain('assistant The front door is unlocked.')
    expect(lines).toContain('user Stop, thanks.')
    expect(lines.some((l) => l.includes('twenty past seven'))).toBe(false) // cut by the barge-in
    expect(typed.text).toBe('Anna let the plumber in from her phone.')
    // The text model was sent the spoken conversation, in order, then the typed question.
    // (Not a speech model's: the sentences said when no provider is reached are made with one.)
    const body = server.rest.find((r) => /generatecontent/i.test(r.path) && !/-tts:/.test(r.path))
      ?.body as {
      contents: { role: string; parts: { text?: string }[] }[]
    }
    const said = body.contents.flatMap((c) => c.parts.flatMap((p) => (p.text ? [p.text] : [])))
    const order = [
      'Please unlock the front door for the plumber.',
      'The front door is unlocked.',
      'And open the garage.',
      'Who let the plumber in?',
    ]
    const at = order.map((t) => said.findIndex((x) => x.includes(t)))
    expect(
      at.every((i) => i >= 0),
      JSON.stringify(said),
    ).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
  })

  it('the session reads as a chat in nocturn transcripts, and no secret reached a log', () => {
    const list = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/app/cli.ts',
        'transcripts',
        'list',
        '--store',
        join(work, 'nocturn.db'),
      ],
      { cwd: ROOT, encoding: 'utf8' },
    )
    const id = list.stdout.split(/\s+/)[0] as string
    const show = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/app/cli.ts',
        'transcripts',
        'show',
        id,
        '--store',
        join(work, 'nocturn.db'),
      ],
      { cwd: ROOT, encoding: 'utf8' },
    )
    expect(show.stdout).toMatch(/voice +user +Please unlock the front door for the plumber\./)
    expect(show.stdout).toMatch(/voice +tool +unlock_front_door → /)
    expect(show.stdout).toMatch(/voice +assistant +The front door is unlocked\./)
    expect(show.stdout).not.toContain('twenty past seven')
    const logs = nocturn?.output ?? ''
    expect(logs).toContain('"event":"nocturn_running"') // the logs were there to look at
    expect(logs).not.toContain('e2e-key-not-for-logs')
    expect(logs).not.toContain(USERS.device.password)
    expect(logs).not.toContain('Please unlock the front door') // transcripts only under pii, redacted
  })
})
