import { randomBytes, randomUUID } from 'node:crypto'
import mqtt, { type MqttClient } from 'mqtt'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { GeminiLive } from '../../src/adapters/gemini/gemini-live.js'
import { GeminiLLM } from '../../src/adapters/gemini/gemini-llm.js'
import { serveSettings } from '../../src/adapters/mqtt/settings-endpoint.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import type { OwnerRelyingParty } from '../../src/adapters/webauthn/owner-check.js'
import { WebAuthnOwners } from '../../src/adapters/webauthn/webauthn-owners.js'
import { showStatus } from '../../src/app/compose/device.js'
import { serveHistory } from '../../src/approvals/history-endpoint.js'
import { serveOwner } from '../../src/approvals/owner-endpoint.js'
import { MicGate } from '../../src/audio/mic-gate.js'
import { approvalAnnouncer } from '../../src/conversations/approval-announcer.js'
import { approvalRecorder } from '../../src/conversations/approval-recorder.js'
import { createConversationEndpoint } from '../../src/conversations/conversation-endpoint.js'
import { ConversationService } from '../../src/conversations/conversation-service.js'
import { serveGrants } from '../../src/conversations/grants-endpoint.js'
import { LiveConversations } from '../../src/conversations/live-conversations.js'
import { PhoneGrants } from '../../src/conversations/phone-grants.js'
import { TranscriptFeed } from '../../src/conversations/transcript-feed.js'
import { Gate } from '../../src/core/gate.js'
import { Grants } from '../../src/core/grants.js'
import { silentLogger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import { DeviceState } from '../../src/device/device-state.js'
import { PhoneClient } from '../../src/phone/client.js'
import { PhoneConversations } from '../../src/phone/conversations.js'
import type { ApprovalBroadcast } from '../../src/ports/approval-broadcast.js'
import type { ApprovalDecision, ApprovalRequest, Approver } from '../../src/ports/approver.js'
import { type Pairing, pairingUri } from '../../src/protocol/index.js'
import { type FakeConnection, FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { settle, VirtualClock } from '../../src/testing/virtual-clock.js'
import { TurnLoop } from '../../src/turn/turn-loop.js'
import { VoiceDriver } from '../../src/voice/voice-driver.js'
import { type TestBroker, USERS } from '../helpers/brokers.js'
import {
  testDesk,
  testDeviceMqtt,
  testPairing,
  testPhoneLink,
  testPhoneRequests,
} from '../helpers/device-mqtt.js'
import { tick, until } from '../helpers/wait.js'
import { brokerWithWorlds } from '../helpers/worlds.js'
import { captureLogger } from '../mqtt/fixture.js'
import { doorTool, TestMic, timeTool } from '../voice/harness.js'

/** A light that needs a phone's yes when typed (text is otherwise allowed), and by voice. */
export function lightTool(lit: string[]): Tool {
  return {
    name: 'set_light',
    description: 'Switches a light on.',
    parameters: { type: 'object', properties: { room: { type: 'string' } }, required: ['room'] },
    policy: { voice: 'ask', text: 'ask' },
    describe: (a) => `switch on the ${(a as { room: string }).room} light`,
    call: async (_ctx, a) => {
      lit.push((a as { room: string }).room)
      return { on: (a as { room: string }).room }
    },
  }
}

class CountingApprover implements Approver {
  readonly asked: ApprovalRequest[] = []
  constructor(readonly inner: Approver) {}
  get audience() {
    return this.inner.audience
  }
  request(r: ApprovalRequest, s: AbortSignal): Promise<ApprovalDecision> {
    this.asked.push(r)
    return this.inner.request(r, s)
  }
}

/**
 * One device as the lead wires it — MQTT approver, conversation endpoint, typed turns on Gemini
 * `generateContent` and spoken sessions on Gemini Live, both against the fake server — and two
 * paired phones (anna, ben), each with its own broker user. `over.broadcast` is told every request
 * and ending, as Web Push is in the composition.
 */
export async function phoneWorld(
  broker: TestBroker,
  o: {
    /** Where the app runs, for the owner's yes (WebAuthn); the default never matches a phone. */
    party?: OwnerRelyingParty
    /** The household's `mqtt.ownerCheck: "always"`. */
    ownerRequired?: boolean
    /** Told each request and ending, as Web Push is (app/compose/alerts.ts). */
    broadcast?: ApprovalBroadcast
    /** listen.mode `wake` (the default here): the speaker has a wake sensitivity to show and set. */
    wakeWord?: boolean
  } = {},
) {
  const server = await FakeLiveServer.start()
  const deviceId = `dev-${randomUUID().slice(0, 8)}`
  const keys = new Map<string, Buffer>([
    ['anna', randomBytes(32)],
    ['ben', randomBytes(32)],
  ])
  const logger = captureLogger()
  // The device's state: its volume in the status and set from a phone, what it refused, counted.
  const deviceState = new DeviceState({ logger })
  const store = new SqliteStore(':memory:')
  const owners = new WebAuthnOwners({
    store: store.owners,
    phones: () => keys,
    party: o.party ?? { origin: 'https://speaker.invalid', rpId: 'speaker.invalid' },
    required: o.ownerRequired ?? false,
    clock: realClock(),
    logger,
  })
  const device = testDeviceMqtt(broker.url, deviceId, () => keys, {
    logger,
    device: deviceState,
    backoffMinMs: 50,
    backoffMaxMs: 300,
  })
  const desk = testDesk(device, {
    logger,
    owner: owners,
    ...(o.broadcast && { broadcast: o.broadcast }),
  })
  await device.approver.ready()
  const feed = new TranscriptFeed(store, logger)
  const live = new LiveConversations()
  const grants = new Grants(store)
  // Followers see approvals come and go; every ending kept for the History (app/compose/).
  desk.listen(approvalAnnouncer(feed))
  desk.listen(approvalRecorder(store.history))
  const counting = new CountingApprover(desk)
  // Approvals carry wall-clock times the approver checks decisions against: a real clock here.
  const gate = new Gate({
    policies: {},
    approver: counting,
    grants,
    clock: realClock(),
    approvalTimeoutMs: 15_000,
    onCovered: (c) => desk.covered(c),
  })
  const unlocked: string[] = []
  const lit: string[] = []
  const tools = new ToolSet([doorTool(unlocked), lightTool(lit), timeTool])
  const llm = new GeminiLLM({
    apiKey: 'k',
    model: 'gemini-3.5-flash',
    baseUrl: server.baseUrl,
    logger,
  })
  const turns = new TurnLoop({
    llm,
    tools,
    gate,
    store: feed,
    persona: defaultPersona,
    clock: realClock(),
    logger,
  })
  const service = new ConversationService({ store: feed, turns, live, clock: realClock(), logger })
  const requests = testPhoneRequests(device, deviceId, () => keys, logger, deviceState)
  const conversations = createConversationEndpoint({ requests, service, feed, clock: realClock() })
  serveGrants(requests, new PhoneGrants({ grants, clock: realClock(), logger }))
  serveHistory(requests, store.history)
  serveSettings(requests, deviceState, { wakeWord: o.wakeWord ?? true, logger })
  serveOwner(requests, owners)
  showStatus(deviceState, device, o.wakeWord ?? true)
  await requests.ready()

  /**
   * One spoken call of `tool` through the gate, as the voice driver makes it: its outcome, and the
   * approval request the gate asked the phones.
   */
  const call = (tool: string, args: unknown) => {
    const before = counting.asked.length
    const outcome = tools.call(
      {
        signal: AbortSignal.timeout(14_000),
        channel: 'voice',
        conversationId: 'conv-call',
        callId: `call-${before}`,
        gate,
        logger: silentLogger,
        onPending: () => {},
      },
      tool,
      args,
    )
    const request = until(() => counting.asked.length > before, `the ${tool} request`).then(
      () => counting.asked[before] as ApprovalRequest,
    )
    return { outcome, request }
  }

  const pairing = (phone: string): Pairing =>
    testPairing(broker.url, deviceId, phone, keys.get(phone) ?? randomBytes(32))
  const closers: Array<() => Promise<unknown>> = []
  const creds = (name: string) =>
    name === 'anna' ? USERS.anna : name === 'ben' ? USERS.ben : USERS.intruder
  /** The phone's conversation side, logged in as its own broker user. */
  const phone = async (name: string, over: Partial<Pairing> = {}) => {
    const p = new PhoneConversations({
      link: testPhoneLink,
      pairing: { ...pairing(name), ...over },
      ...creds(name),
      logger: captureLogger(),
      timeoutMs: 10_000,
    })
    closers.push(() => p.close())
    await p.start()
    return p
  }
  /** The environment `nocturn phone` reads as phone `name`: its pairing and its broker user. */
  const phoneEnv = (name: string): NodeJS.ProcessEnv => ({
    NOCTURN_PHONE_PAIRING: pairingUri(pairing(name)),
    NOCTURN_MQTT_USERNAME: creds(name).username,
    NOCTURN_MQTT_PASSWORD: creds(name).password,
  })
  /** The phone's approval side. */
  const approvals = async (name: string) => {
    const p = new PhoneClient({
      link: testPhoneLink,
      pairing: pairing(name),
      ...creds(name),
      logger: captureLogger(),
    })
    closers.push(() => p.close())
    await p.start()
    return p
  }
  const raw = async (user: { username: string; password: string } = USERS.intruder) => {
    const c: MqttClient = await mqtt.connectAsync(broker.url, { ...user, reconnectPeriod: 0 })
    closers.push(() => c.endAsync(true))
    return c
  }

  /**
   * One spoken session through the real SDK against the fake Live server: `script` plays the
   * provider's side; the conversation is marked live for its length, as the composition does.
   */
  const speak = async (script: (conn: FakeConnection, clock: VirtualClock) => Promise<void>) => {
    const clock = new VirtualClock(Date.now())
    const speaker = new FakeSpeaker(clock)
    const mic = new MicGate({ source: new TestMic(), speaker, clock, echo: 'aec', tailMs: 300 })
    const driver = new VoiceDriver({
      llm: new GeminiLive({
        apiKey: 'k',
        model: 'gemini-2.5-flash-native-audio-preview-12-2025',
        baseUrl: server.baseUrl,
        logger,
        clock: realClock(),
      }),
      tools,
      gate,
      store: feed,
      persona: defaultPersona,
      clock,
      logger,
      mic,
      speaker,
      options: { idleMs: 10 * 60_000, budgetMs: 30 * 60_000 },
    })
    const conversation = feed.createConversation({ channel: 'voice', at: Date.now() })
    live.begin(conversation.id)
    const connections = server.connections.length
    const done = driver.runSession({ conversationId: conversation.id })
    const conn = await server.waitForConnection(connections)
    await tick()
    await settle()
    let scripted = false
    try {
      await script(conn, clock)
      scripted = true
    } finally {
      // A failing script still ends its session, so nothing of it runs on once the world closes;
      // its own error is the one reported.
      try {
        await driver.stop()
        await (scripted ? done : done.catch(() => {}))
      } finally {
        live.end(conversation.id)
      }
    }
    return conversation.id
  }

  return {
    server,
    deviceId,
    keys,
    logger,
    device,
    /** The one owner of the device's state (its volume). */
    deviceState,
    /** The owner's yes: the phones' WebAuthn credentials. */
    owners,
    /** The approval desk, its endings recorded: what the gate asks through. */
    approver: desk,
    store,
    feed,
    live,
    grants,
    gate,
    asked: counting.asked,
    unlocked,
    lit,
    call,
    service,
    /** Decisions refused for `reason`, as the device's state counts them. */
    refusedDecisions(reason: string): number {
      return deviceState.snapshot.refused.decisions[reason] ?? 0
    },
    /** The phones' other signed requests refused, by reason, as the device's state counts them. */
    refusedRequests(): Readonly<Record<string, number>> {
      return deviceState.snapshot.refused.requests
    },
    /** The phones' request channel (closed to play a device that never answers). */
    endpoint: requests,
    topics: device.approver.topics,
    phone,
    phoneEnv,
    approvals,
    raw,
    speak,
    async close() {
      conversations.close()
      requests.close()
      for (const c of closers) await c().catch(() => {})
      desk.withdrawAll()
      await device.close().catch(() => {})
      store.close()
      await server.close()
    },
  }
}

export type PhoneWorld = Awaited<ReturnType<typeof phoneWorld>>

/**
 * One broker for a describe block and a fresh phone world per test: the broker starts before the
 * block and stops after it; each test's world is closed when the test ends.
 */
export function worldsOn(make: (port: number) => TestBroker): {
  broker(): TestBroker
  open(): Promise<PhoneWorld>
} {
  return brokerWithWorlds(make, phoneWorld)
}
