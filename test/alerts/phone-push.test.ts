import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mqtt from 'mqtt'
import { describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { loadOrCreateVapidKeys } from '../../src/adapters/webpush/vapid-key-file.js'
import { WebPushSender } from '../../src/adapters/webpush/web-push-sender.js'
import { PhonePush } from '../../src/alerts/phone-push.js'
import { servePush } from '../../src/alerts/push-endpoint.js'
import { NocturnError } from '../../src/core/errors.js'
import { DeviceState } from '../../src/device/device-state.js'
import { PhoneClient } from '../../src/phone/client.js'
import { PhoneConversations } from '../../src/phone/conversations.js'
import type { ApprovalRequest } from '../../src/ports/approver.js'
import { signPhoneRequest } from '../../src/protocol/grant-ops.js'
import { newNonce } from '../../src/protocol/index.js'
import { mosquittoBroker, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import {
  testDesk,
  testDeviceMqtt,
  testPairing,
  testPhoneLink,
  testPhoneRequests,
} from '../helpers/device-mqtt.js'
import { PushReceiver, type TestSubscription } from '../helpers/push-receiver.js'
import { missingCommands } from '../helpers/system.js'
import { brokerWithWorlds } from '../helpers/worlds.js'
import { captureLogger } from '../mqtt/fixture.js'
import { doorApproval } from './door-approval.js'

/** A device with Web Push on the real Mosquitto, two paired phones, a push service on loopback. */
async function pushWorld(broker: TestBroker) {
  const deviceId = `dev-${randomUUID().slice(0, 8)}`
  const keys = new Map<string, Buffer>([
    ['anna', randomBytes(32)],
    ['ben', randomBytes(32)],
  ])
  const logger = captureLogger()
  const store = new SqliteStore(':memory:')
  const receiver = await PushReceiver.start()
  const vapid = loadOrCreateVapidKeys(join(mkdtempSync(join(tmpdir(), 'nocturn-push-')), 'v.json'))
  const sender = new WebPushSender({ keys: vapid, subject: 'mailto:house@example.org' })
  const push = new PhonePush({
    subscriptions: store.push,
    sender,
    phones: () => keys,
    deviceId,
    clock: realClock(),
    logger,
    retry: { initialMs: 20, maxMs: 100, giveUpAfter: 3 },
  })
  const state = new DeviceState()
  const device = testDeviceMqtt(broker.url, deviceId, () => keys, {
    logger,
    device: state,
  })
  const desk = testDesk(device, { logger, broadcast: push })
  await device.approver.ready()
  const requests = testPhoneRequests(device, deviceId, () => keys, logger, state)
  servePush(requests, {
    subscriptions: store.push,
    vapidKey: vapid.publicKey,
    clock: realClock(),
    schemes: ['https:', 'http:'],
  })
  await requests.ready()
  const closers: Array<() => Promise<unknown>> = []
  const creds = (name: string) => (name === 'anna' ? USERS.anna : USERS.ben)
  const pairing = (name: string) =>
    testPairing(broker.url, deviceId, name, keys.get(name) ?? randomBytes(32))
  /** The phone's request side, as its own broker user. */
  const phone = async (name: string) => {
    const p = new PhoneConversations({
      link: testPhoneLink,
      pairing: pairing(name),
      ...creds(name),
      logger: captureLogger(),
      timeoutMs: 10_000,
    })
    closers.push(() => p.close())
    await p.start()
    return p
  }
  /** The phone's approval side: what it receives on the broker. */
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
  const subscribe = async (name: string, sub: TestSubscription) => {
    const p = await phone(name)
    return p.request('push_subscribe', {
      endpoint: sub.endpoint,
      keys: { p256dh: sub.p256dh, auth: sub.auth },
    })
  }
  const ask = (over: Partial<ApprovalRequest> = {}) => {
    const request = doorApproval(over)
    const controller = new AbortController()
    const decision = desk.request(request, controller.signal)
    decision.catch(() => {})
    return { request, controller, decision }
  }
  return {
    /** Refused phone requests by reason, as the device's state counts them. */
    refusedRequests: () => state.snapshot.refused.requests,
    brokerUrl: broker.url,
    deviceId,
    keys,
    logger,
    store,
    receiver,
    vapid,
    push,
    device,
    requests,
    phone,
    approvals,
    subscribe,
    ask,
    async close() {
      push.close()
      requests.close()
      for (const c of closers) await c().catch(() => {})
      await device.close().catch(() => {})
      await receiver.close()
      store.close()
    },
  }
}

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

describe.skipIf(skip !== undefined)('Web Push to the paired phones (Mosquitto)', () => {
  const worlds = brokerWithWorlds(mosquittoBroker, pushWorld)

  it("a phone gets the device's VAPID key in a reply signed with its own key", async () => {
    const w = await worlds.open()
    const anna = await w.phone('anna')
    const r = await anna.request('push_key', {})
    expect(r.done).toEqual({ vapidKey: w.vapid.publicKey })
  })

  it('a request reaches each subscribed phone as the signed request exactly as published; withdrawn, a close follows', async () => {
    const w = await worlds.open()
    const annaSub = w.receiver.subscription('anna-1')
    const benSub = w.receiver.subscription('ben-1')
    expect((await w.subscribe('anna', annaSub)).done).toEqual({ subscribed: true })
    await w.subscribe('ben', benSub)
    expect(w.store.push.pushSubscriptions().map((s) => s.phone)).toEqual(['anna', 'ben'])
    const onBroker = await w.approvals('anna')

    const { request, controller } = w.ask()
    const published = await onBroker.waitFor(request.id)
    const pushes = await w.receiver.waitFor(2)
    expect(w.receiver.errors).toEqual([])
    const raw = await new Promise<string>((resolve, reject) => {
      // The retained request as a phone reads it from the broker, byte for byte.
      const topic = `${PREFIX}/${w.deviceId}/approvals/${request.id}`
      mqtt.connectAsync(w.brokerUrl, { ...USERS.anna, reconnectPeriod: 0 }).then((c) => {
        c.on('message', (t, p) => {
          if (t === topic && p.length > 0) {
            resolve(p.toString('utf8'))
            void c.endAsync(true)
          }
        })
        c.subscribeAsync(topic).catch(reject)
      }, reject)
    })
    for (const p of pushes) {
      const env = JSON.parse(p.plaintext) as Record<string, unknown>
      expect(env).toMatchObject({ v: 1, kind: 'request', device: w.deviceId, id: request.id })
      expect(p.plaintext.endsWith(`"message":${raw}}`)).toBe(true)
      expect(env.message).toEqual(JSON.parse(raw))
      expect(p.headers.urgency).toBe('high')
      expect(p.vapid.key).toBe(w.vapid.publicKey)
    }
    expect((JSON.parse(pushes[0]?.plaintext ?? '{}').message as { digest: string }).digest).toBe(
      published.digest,
    )
    expect(pushes.map((p) => p.name).sort()).toEqual(['anna-1', 'ben-1'])

    controller.abort(new NocturnError('NOC_ERR_CANCELLED', 'withdrawn'))
    const all = await w.receiver.waitFor(4)
    const closes = all.slice(2).map((p) => JSON.parse(p.plaintext) as Record<string, unknown>)
    for (const c of closes) {
      expect(c).toMatchObject({ kind: 'outcome', id: request.id, message: { state: 'withdrawn' } })
    }
    // The close has the request's Topic, so it replaces a request the phone has not received yet.
    expect(all[2]?.headers.topic).toBe(all[0]?.headers.topic)
    expect(all[2]?.headers.topic).toMatch(/^[A-Za-z0-9_-]{1,32}$/)
  })

  it('a push service answering 410 has the subscription removed; 429 is tried again', async () => {
    const w = await worlds.open()
    const gone = w.receiver.subscription('anna-gone')
    const busy = w.receiver.subscription('anna-busy')
    await w.subscribe('anna', gone)
    await w.subscribe('anna', busy)
    w.receiver.answer('anna-gone', 410)
    w.receiver.answer('anna-busy', 429, 503)
    const { controller } = w.ask()
    await w.receiver.waitFor(4)
    await w.push.idle()
    const left = w.store.push.pushSubscriptions('anna').map((s) => s.endpoint)
    expect(left).toEqual([busy.endpoint])
    expect(w.receiver.received.filter((p) => p.name === 'anna-busy').map((p) => p.status)).toEqual([
      429, 503, 201,
    ])
    controller.abort()
  })

  it('a push_subscribe with a bad MAC stores nothing and gets no answer', async () => {
    const w = await worlds.open()
    const sub = w.receiver.subscription('forged')
    const fields = {
      id: newNonce().slice(0, 20),
      device: w.deviceId,
      phone: 'anna',
      op: 'push_subscribe' as const,
      args: { endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } },
      at: Date.now(),
      nonce: newNonce(),
    }
    const forged = { v: 1, ...fields, mac: signPhoneRequest(randomBytes(32), fields) }
    const c = await mqtt.connectAsync(w.brokerUrl, {
      ...USERS.anna,
      reconnectPeriod: 0,
    })
    await c.publishAsync(
      `${PREFIX}/${w.deviceId}/conversations/request/anna`,
      JSON.stringify(forged),
      { qos: 1 },
    )
    await c.endAsync()
    const end = Date.now() + 5000
    while ((w.refusedRequests()['bad-mac'] ?? 0) === 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 20))
    }
    expect(w.refusedRequests()['bad-mac']).toBe(1)
    expect(w.store.push.pushSubscriptions()).toEqual([])
  })

  it("a revoked phone's subscriptions are forgotten and it is pushed nothing", async () => {
    const w = await worlds.open()
    await w.subscribe('anna', w.receiver.subscription('anna-1'))
    await w.subscribe('ben', w.receiver.subscription('ben-1'))
    w.keys.delete('ben')
    const { controller } = w.ask()
    await w.receiver.waitFor(1)
    await w.push.idle()
    expect(w.receiver.received.map((p) => p.name)).toEqual(['anna-1'])
    expect(w.store.push.pushSubscriptions().map((s) => s.phone)).toEqual(['anna'])
    controller.abort()
  })

  it('a phone takes its subscription back', async () => {
    const w = await worlds.open()
    const sub = w.receiver.subscription('anna-1')
    await w.subscribe('anna', sub)
    const anna = await w.phone('anna')
    const r = await anna.request('push_unsubscribe', { endpoint: sub.endpoint })
    expect(r.done).toEqual({ unsubscribed: true })
    expect(w.store.push.pushSubscriptions()).toEqual([])
  })
})
