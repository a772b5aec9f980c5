import { randomBytes, randomUUID } from 'node:crypto'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { MAX_PAYLOAD_BYTES, newNonce, signDecision } from '../../src/protocol/index.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { freePort, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { until } from '../helpers/wait.js'
import { brokerWithWorlds } from '../helpers/worlds.js'
import { deviceWorld, unlockDoor, type World } from './fixture.js'

/**
 * The approval contract, run unchanged against Mosquitto and the embedded broker: round trips,
 * hostile input, and broker faults. Nothing in here asserts on time.
 */
export function approvalContract(name: string, make: (port: number) => TestBroker, skip?: string) {
  describe.skipIf(skip !== undefined)(`approvals over MQTT (${name})`, () => {
    const worlds = brokerWithWorlds(make, deviceWorld)
    const open = worlds.open

    /** A decision signed by hand, for the hostile cases. */
    const decision = (
      w: World,
      id: string,
      o: {
        phone?: string
        key?: Buffer
        digest?: string
        at?: number
        nonce?: string
        decision?: 'approve' | 'deny'
        grant?: 'once' | 'session'
      } = {},
    ) => {
      const phone = o.phone ?? 'anna'
      const key = o.key ?? w.keys.get(phone) ?? randomBytes(32)
      const fields = {
        id,
        decision: o.decision ?? 'approve',
        grant: o.grant ?? 'once',
        digest: o.digest ?? '',
        phone,
        at: o.at ?? Date.now(),
        nonce: o.nonce ?? newNonce(),
      }
      const { digest: _d, ...rest } = fields
      return JSON.stringify({ v: 1, ...rest, mac: signDecision(key, fields) })
    }

    describe('round trips', () => {
      it('approve once: the call goes ahead, the request is cleared, the next call asks again', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        const shown = anna.pending().find((r) => r.id === id)
        expect(shown?.action).toBe('unlock the front door')
        const outcome = anna.waitOutcome(id)
        await anna.decide(id, 'approve', 'once')
        await expect(call).resolves.toBeUndefined()
        expect(await outcome).toMatchObject({ id, state: 'approved', by: 'anna' })
        expect(await w.retainedRequests()).toEqual(new Map())
        expect(w.grants.list()).toEqual([])
        // "once" remembers nothing: the same call asks the phone again.
        const again = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id2 = await w.nextRequest(anna)
        await anna.decide(id2, 'deny')
        await expect(again).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
      })

      it('a session grant: the next identical call needs no phone', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const call = w.check(unlockDoor, { door: 'back' }, w.ctx())
        const id = await w.nextRequest(anna)
        await anna.decide(id, 'approve', 'session')
        await call
        expect(w.grants.list()).toHaveLength(1)
        expect(w.grants.list()[0]?.createdBy).toEqual({ kind: 'phone', id: 'anna' })
        await w.check(unlockDoor, { door: 'back' }, w.ctx())
        expect(w.asked).toHaveLength(1)
      })

      it('deny: the call is refused with a sentence, the request cleared', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        const outcome = anna.waitOutcome(id)
        await anna.decide(id, 'deny')
        await expect(call).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
        expect(await outcome).toMatchObject({ state: 'denied', by: 'anna' })
        expect(await w.retainedRequests()).toEqual(new Map())
      })

      it('expiry: nobody answers, the call is denied, the request cleared as expired', async () => {
        // The deadline passes on the device's clock when the test says so, not after real waiting.
        const clock = new VirtualClock(Date.now())
        const w = await open({ timeoutMs: 60_000, clock })
        const anna = await w.phone('anna')
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        const outcome = anna.waitOutcome(id)
        await clock.advance(60_000)
        await expect(call).rejects.toMatchObject({ code: 'NOC_ERR_APPROVAL_TIMEOUT' })
        expect(await outcome).toMatchObject({ state: 'expired' })
        expect(await w.retainedRequests()).toEqual(new Map())
      })

      it('withdrawal: cleared, "withdrawn" announced, a later valid decision grants nothing', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const ac = new AbortController()
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx({ signal: ac.signal }))
        const id = await w.nextRequest(anna)
        const digest = anna.pending().find((r) => r.id === id)?.digest ?? ''
        const gone = new Promise<void>((r) =>
          anna.on((e) => e.kind === 'gone' && e.id === id && r()),
        )
        const outcome = anna.waitOutcome(id)
        ac.abort()
        await expect(call).rejects.toMatchObject({ code: 'NOC_ERR_CANCELLED' })
        expect(await outcome).toMatchObject({ state: 'withdrawn' })
        await gone
        expect(await w.retainedRequests()).toEqual(new Map())
        // The phone no longer offers it; a decision signed anyway is refused.
        await expect(anna.decide(id, 'approve', 'session')).rejects.toThrow(/not pending/)
        const late = await w.raw(USERS.phone)
        await late.publishAsync(
          w.topics.decision(id),
          decision(w, id, { digest, grant: 'session' }),
          { qos: 1 },
        )
        await until(() => w.rejected('withdrawn') === 1, 'the late decision to be refused')
        expect(w.grants.list()).toEqual([])
      })

      it('two phones racing: the first valid decision wins, both hear the outcome', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const ben = await w.phone('ben')
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        await ben.waitFor(id)
        const seen = [anna.waitOutcome(id), ben.waitOutcome(id)]
        await Promise.all([anna.decide(id, 'approve'), ben.decide(id, 'deny')])
        const results = await Promise.allSettled([call])
        const outcomes = await Promise.all(seen)
        expect(outcomes[0]).toEqual(outcomes[1])
        const winner = outcomes[0]!
        if (winner.state === 'approved') expect(results[0]?.status).toBe('fulfilled')
        else expect(results[0]?.status).toBe('rejected')
        await until(() => w.rejected('already-settled') === 1, 'the loser to be refused')
      })

      it('a revoked phone is neither asked nor believed; with no phone paired, denied at once', async () => {
        const w = await open()
        const ben = await w.phone('ben')
        const benKey = w.keys.get('ben')!
        w.keys.delete('ben')
        const refused = new Promise<string>((r) =>
          ben.on((e) => e.kind === 'refused' && r(e.reason)),
        )
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const anna = await w.phone('anna')
        const id = await w.nextRequest(anna)
        expect(await refused).toBe('not-signed-for-this-phone')
        const digest = anna.pending().find((r) => r.id === id)!.digest
        const link = await w.raw(USERS.phone)
        await link.publishAsync(
          w.topics.decision(id),
          decision(w, id, { phone: 'ben', key: benKey, digest }),
          { qos: 1 },
        )
        await until(() => w.rejected('unknown-phone') === 1, 'the revoked phone to be refused')
        await anna.decide(id, 'deny')
        await expect(call).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
        w.keys.clear()
        await expect(w.check(unlockDoor, { door: 'front' }, w.ctx())).rejects.toMatchObject({
          code: 'NOC_ERR_APPROVER_UNREACHABLE',
        })
        expect(w.grants.list()).toEqual([])
      })

      it('status: retained, mirrors state and mute, and the last will says offline', async () => {
        const w = await open()
        const c = await w.raw(USERS.phone)
        const statuses: Array<Record<string, unknown>> = []
        c.on('message', (t, p) => t === w.topics.status && statuses.push(JSON.parse(p.toString())))
        await c.subscribeAsync(w.topics.status, { qos: 1 })
        await until(() => statuses.some((s) => s.online === true), 'online status')
        expect(statuses.at(-1)).toMatchObject({
          v: 1,
          online: true,
          state: 'idle',
          muted: false,
          model: 'test-model',
        })
        w.device.status.setState('listening', true)
        await until(() => statuses.at(-1)?.state === 'listening', 'state mirrored')
        expect(statuses.at(-1)?.muted).toBe(true)
        expect(statuses.at(-1)).not.toHaveProperty('falseWakes')
        // A false wake caught by the second opinion is counted; the state's time does not move.
        const since = statuses.at(-1)?.since
        w.device.status.setState('listening', true, undefined, 1)
        await until(() => statuses.at(-1)?.falseWakes === 1, 'the false wake counted')
        expect(statuses.at(-1)?.since).toBe(since)
        // A crash (no goodbye): the broker publishes the last will.
        await w.device.connection.close({ force: true })
        await until(() => statuses.at(-1)?.online === false, 'the last will')
        expect(statuses.at(-1)).toMatchObject({ state: 'offline', muted: null })
      })
    })

    describe('hostile input: nothing is ever granted', () => {
      it('a forged request (not signed for us) is refused by the phone and cleared by the device', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const intruder = await w.raw()
        const id = randomUUID()
        const refused = new Promise<string>((r) =>
          anna.on((e) => e.kind === 'refused' && e.id === id && r(e.reason)),
        )
        const forged = {
          v: 1,
          id,
          device: w.deviceId,
          tool: 'unlock_door',
          action: 'turn on the porch light',
          args: { door: 'front' },
          critical: false,
          channel: 'voice',
          conversation: 'c',
          createdAt: Date.now(),
          expiresAt: Date.now() + 60_000,
          digest: 'a'.repeat(64),
          macs: { anna: 'b'.repeat(64) },
        }
        await intruder.publishAsync(w.topics.request(id), JSON.stringify(forged), {
          qos: 1,
          retain: true,
        })
        expect(await refused).toBe('digest-mismatch')
        await expect(anna.decide(id, 'approve')).rejects.toThrow(/not pending|verified/)
        await until(
          () => w.logger.entries.some((e) => e.fields.event === 'foreign_request_cleared'),
          'device to clear it',
        )
        expect(await w.retainedRequests()).toEqual(new Map())
      })

      it('an overwritten request (new action) is refused; the device restores its own', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const intruder = await w.raw()
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        const real = anna.pending().find((r) => r.id === id)!
        const refused = new Promise<string>((r) =>
          anna.on((e) => e.kind === 'refused' && e.id === id && r(e.reason)),
        )
        const restored = new Promise<void>((r) => {
          let gone = false
          anna.on((e) => {
            if (e.kind === 'refused' && e.id === id) gone = true
            if (gone && e.kind === 'pending' && e.request.id === id) r()
          })
        })
        await intruder.publishAsync(
          w.topics.request(id),
          JSON.stringify({ ...real, action: 'turn on the porch light' }),
          { qos: 1, retain: true },
        )
        expect(await refused).toBe('digest-mismatch')
        await restored
        expect(anna.pending().find((r) => r.id === id)?.action).toBe('unlock the front door')
        await anna.decide(id, 'deny')
        await expect(call).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
      })

      it('malformed, oversized, wrong types, unknown phone, bad MAC, other digest, bad time, unknown id', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const phoneLink = await w.raw(USERS.phone)
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        const digest = anna.pending().find((r) => r.id === id)!.digest
        const otherDigest = randomBytes(32).toString('hex')
        const send = (payload: string | Buffer, topicId = id) =>
          phoneLink.publishAsync(w.topics.decision(topicId), payload, { qos: 1 })
        const hour = 3_600_000
        await send('{"v":1,"id":')
        await send(Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20))
        await send(
          JSON.stringify({
            v: 1,
            id,
            decision: 'yes',
            grant: 'once',
            phone: 'anna',
            at: 'now',
            nonce: 1,
            mac: 2,
          }),
        )
        await send(decision(w, id, { phone: 'mallory', digest }))
        await send(decision(w, id, { key: randomBytes(32), digest }))
        await send(decision(w, id, { digest: otherDigest }))
        await send(decision(w, id, { digest, at: Date.now() - hour }))
        await send(decision(w, id, { digest, at: Date.now() + hour }))
        const stranger = randomUUID()
        await send(decision(w, stranger, { digest }), stranger)
        await send(decision(w, id, { digest }), stranger)
        await until(
          () => Object.values(w.refusals()).reduce((a, b) => a + b, 0) === 10,
          'all ten refused',
        )
        expect(w.refusals()).toEqual({
          'malformed-json': 1,
          oversized: 1,
          'invalid-payload': 1,
          'unknown-phone': 1,
          'bad-mac': 2,
          'outside-window': 2,
          'unknown-request': 1,
          'id-mismatch': 1,
        })
        // Every refusal says why; no key or MAC ever reaches a log line.
        const refusals = w.logger.entries.filter((e) => e.fields.event === 'decision_rejected')
        expect(refusals).toHaveLength(10)
        for (const r of refusals) expect(typeof r.fields.reason).toBe('string')
        const logged = JSON.stringify(w.logger.entries)
        for (const k of w.keys.values()) {
          expect(logged).not.toContain(k.toString('hex'))
          expect(logged).not.toContain(k.toString('base64url'))
        }
        expect(logged).not.toMatch(/[0-9a-f]{64}/)
        // The retained status says what was refused, for a phone's Diagnostics (within a second).
        const watcher = await w.raw(USERS.phone)
        let status: Record<string, unknown> = {}
        watcher.on('message', (_t, p) => {
          status = JSON.parse(p.toString())
        })
        await watcher.subscribeAsync(w.topics.status, { qos: 1 })
        await until(
          () => JSON.stringify(status.refused) === JSON.stringify({ decisions: w.refusals() }),
          'the refusals in the status',
        )
        // Still pending, still answerable.
        expect(w.pending()).toBe(1)
        await anna.decide(id, 'approve')
        await call
        expect(w.grants.list()).toEqual([])
      })

      it('a replayed nonce and a decision for a settled request are refused', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const link = await w.raw(USERS.phone)
        const first = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id1 = await w.nextRequest(anna)
        const d1 = anna.pending().find((r) => r.id === id1)!.digest
        const nonce = newNonce()
        await link.publishAsync(w.topics.decision(id1), decision(w, id1, { digest: d1, nonce }), {
          qos: 1,
        })
        await first
        await link.publishAsync(w.topics.decision(id1), decision(w, id1, { digest: d1 }), {
          qos: 1,
        })
        await until(() => w.rejected('already-settled') === 1, 'settled refusal')
        const second = w.check(unlockDoor, { door: 'back' }, w.ctx())
        const id2 = await w.nextRequest(anna)
        const d2 = anna.pending().find((r) => r.id === id2)!.digest
        await link.publishAsync(
          w.topics.decision(id2),
          decision(w, id2, { digest: d2, nonce, grant: 'session' }),
          { qos: 1 },
        )
        await until(() => w.rejected('replayed-nonce') === 1, 'replay refusal')
        await anna.decide(id2, 'deny')
        await expect(second).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
        expect(w.grants.list()).toEqual([])
      })

      it('a decision published on the request topic changes nothing', async () => {
        const w = await open()
        const anna = await w.phone('anna')
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        const digest = anna.pending().find((r) => r.id === id)!.digest
        const before = await w.retainedRequests()
        // A phone may not write there at all: Mosquitto drops the message, aedes drops the client.
        const phoneLink = await w.raw(USERS.phone)
        await Promise.race([
          phoneLink
            .publishAsync(w.topics.request(id), decision(w, id, { digest }), {
              qos: 1,
              retain: true,
            })
            .catch(() => {}),
          new Promise<void>((r) => phoneLink.once('close', () => r())),
        ])
        expect(await w.retainedRequests()).toEqual(before)
        // …and a client that may write there only makes the device restore its request.
        const intruder = await w.raw()
        await intruder.publishAsync(w.topics.request(id), decision(w, id, { digest }), {
          qos: 1,
          retain: true,
        })
        await until(
          () => w.logger.entries.some((e) => e.fields.event === 'pending_request_republished'),
          'the device to notice',
        )
        await until(() => anna.pending().some((r) => r.id === id), 'restored')
        expect(await w.retainedRequests()).toEqual(before)
        expect(w.pending()).toBe(1)
        expect(w.grants.list()).toEqual([])
        await anna.decide(id, 'deny')
        await expect(call).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
      })

      it('a flood of 10 000 bogus decisions: the real approval still succeeds, no unverified nonce is kept', async () => {
        // A loaded machine may take a while to work through the flood: the request must outlive it.
        const w = await open({ timeoutMs: 120_000 })
        const anna = await w.phone('anna')
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        const digest = anna.pending().find((r) => r.id === id)!.digest
        const flooder = await w.raw(USERS.phone)
        const N = 10_000
        // The forgeries carry the nonce the real decision will use: had the device kept a nonce
        // from a message that did not verify, the real one would be refused as a replay.
        const nonce = newNonce()
        const kinds = [
          () => '{not json',
          () => decision(w, id, { key: randomBytes(32), digest, nonce }),
          () => decision(w, id, { phone: `p${randomUUID().slice(0, 8)}`, digest, nonce }),
          () => decision(w, randomUUID(), { digest }),
        ]
        // In bursts of 500, as fast as the link takes them (a few seconds in all).
        for (let i = 0; i < N; i += 500) {
          const burst: Promise<unknown>[] = []
          for (let j = i; j < i + 500; j++) {
            const topicId = j % 4 === 3 ? randomUUID() : id
            burst.push(
              flooder.publishAsync(w.topics.decision(topicId), kinds[j % 4]!(), { qos: 0 }),
            )
          }
          await Promise.all(burst)
        }
        await until(
          () => Object.values(w.refusals()).reduce((a, b) => a + b, 0) >= N,
          'flood handled',
          20_000,
        )
        await flooder.publishAsync(w.topics.decision(id), decision(w, id, { digest, nonce }), {
          qos: 1,
        })
        await call
        expect(w.rejected('replayed-nonce')).toBe(0)
        expect(w.grants.list()).toEqual([])
        expect(w.pending()).toBe(0)
      }, 150_000)
    })

    describe('broker faults', () => {
      it('killed mid-approval: new requests fail at once, the pending one is re-published and approvable', async () => {
        const w = await open({ timeoutMs: 30_000 })
        const anna = await w.phone('anna')
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        const id = await w.nextRequest(anna)
        await worlds.broker().kill()
        await until(() => !w.device.connection.connected, 'the device to notice')
        await expect(w.check(unlockDoor, { door: 'garage' }, w.ctx())).rejects.toMatchObject({
          code: 'NOC_ERR_APPROVER_UNREACHABLE',
          message: expect.stringContaining("can't reach"),
        })
        const back = new Promise<void>((r) =>
          anna.on((e) => e.kind === 'pending' && e.request.id === id && r()),
        )
        await worlds.broker().start()
        // The restarted broker lost its retained messages; the device puts the request back,
        // and its status.
        await back
        const watcher = await w.raw(USERS.phone)
        const status: Array<Record<string, unknown>> = []
        watcher.on('message', (_t, p) => status.push(JSON.parse(p.toString())))
        await watcher.subscribeAsync(w.topics.status, { qos: 1 })
        await until(() => status.some((s) => s.online === true), 'status re-published')
        await anna.decide(id, 'approve')
        await call
        expect(w.pending()).toBe(0)
      }, 30_000)

      it('asked before the first connection is made: it waits and goes out; a first attempt that fails refuses', async () => {
        // The appliance listens before it connects (start-up is quicker so): a request asked
        // meanwhile waits for that first connection instead of being refused as an outage.
        const w = await open({ connect: false })
        const anna = await w.phone('anna')
        expect(w.approver.unavailable()).toBeUndefined()
        const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
        await until(
          () => w.logger.entries.some((e) => e.fields.event === 'approval_awaits_broker'),
          'the approval to wait for the broker',
        )
        w.device.connection.start()
        const id = await w.nextRequest(anna)
        await anna.decide(id, 'approve')
        await call
        await w.close()
        // Nothing answers there: once that first attempt has failed, it is an outage like any.
        const dead = await open({ connect: false, url: `mqtt://127.0.0.1:${await freePort()}` })
        const refused = dead.check(unlockDoor, { door: 'back' }, dead.ctx())
        await until(
          () => dead.logger.entries.some((e) => e.fields.event === 'approval_awaits_broker'),
          'the approval to wait for the broker',
        )
        dead.device.connection.start()
        await expect(refused).rejects.toMatchObject({ code: 'NOC_ERR_APPROVER_UNREACHABLE' })
        expect(dead.approver.unavailable()).toBe('the MQTT broker is unreachable')
        await expect(dead.check(unlockDoor, { door: 'back' }, dead.ctx())).rejects.toMatchObject({
          code: 'NOC_ERR_APPROVER_UNREACHABLE',
        })
        expect(dead.asked).toHaveLength(1)
      }, 30_000)

      it('"online" only once the device hears: the status waits for its subscriptions to be granted', async () => {
        // Between device and broker, a proxy that holds every SUBACK back 300 ms: a status sent as
        // the connection opens would reach a phone while the device's subscriptions are still
        // unanswered, and a request the phone sent on seeing it could be lost.
        const proxy = await subackDelayingProxy(new URL(worlds.broker().url), 300)
        try {
          const w = await open({ connect: false, url: proxy.url })
          let subscribed = false
          void w.approver.ready().then(() => {
            subscribed = true
          })
          let subscribedAtOnline: boolean | undefined
          const watcher = await w.raw(USERS.phone)
          watcher.on('message', (t, p) => {
            if (t !== w.topics.status || subscribedAtOnline !== undefined) return
            if ((JSON.parse(p.toString()) as { online?: boolean }).online)
              subscribedAtOnline = subscribed
          })
          await watcher.subscribeAsync(w.topics.status, { qos: 1 })
          w.device.connection.start()
          // A state change while the subscriptions are unanswered must not say "online" either.
          await until(() => w.device.connection.connected, 'the device to connect')
          w.device.status.setState('listening', false)
          await until(() => subscribedAtOnline !== undefined, 'the device to say it is online')
          expect(subscribedAtOnline).toBe(true)
          expect(proxy.delayed()).toBeGreaterThan(0)
        } finally {
          await worlds.closeWorld()
          await proxy.close()
        }
      }, 30_000)

      it('device restart: requests left behind are cleared and reported expired', async () => {
        const deviceId = `dev-${randomUUID().slice(0, 8)}`
        const w1 = await open({ deviceId })
        const anna1 = await w1.phone('anna')
        void w1.check(unlockDoor, { door: 'front' }, w1.ctx()).catch(() => {})
        const id = await w1.nextRequest(anna1)
        // A crash: the connection drops without withdrawing anything.
        await w1.device.connection.close({ force: true })
        expect((await w1.retainedRequests()).size).toBe(1)
        const watcher = await w1.raw(USERS.phone)
        const outcomes: unknown[] = []
        watcher.on('message', (_t, p) => outcomes.push(JSON.parse(p.toString())))
        await watcher.subscribeAsync(`${PREFIX}/${deviceId}/approvals/+/outcome`, { qos: 1 })
        const w2 = await deviceWorld(worlds.broker(), { deviceId })
        try {
          await until(() => outcomes.length > 0, 'an outcome for the leftover')
          expect(outcomes[0]).toMatchObject({ id, state: 'expired' })
          expect(await w2.retainedRequests()).toEqual(new Map())
        } finally {
          await w2.close()
        }
      })
    })
  })
}

/** A TCP proxy to `target` that forwards everything, but each SUBACK from the broker only after `delayMs`. */
async function subackDelayingProxy(target: URL, delayMs: number) {
  let delayed = 0
  const sockets = new Set<Socket>()
  const server = createServer((device) => {
    const upstream = connect(Number(target.port), target.hostname)
    sockets.add(device).add(upstream)
    device.pipe(upstream)
    let pending = Buffer.alloc(0)
    let chain = Promise.resolve()
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        // Fixed header: type byte, then the remaining length (7 bits a byte, high bit = more).
        let len = 0
        let at = 1
        let complete = false
        for (let mul = 1; at < pending.length && at <= 4; mul *= 128) {
          const b = pending[at++] as number
          len += (b & 0x7f) * mul
          if ((b & 0x80) === 0) {
            complete = true
            break
          }
        }
        if (!complete || pending.length < at + len) break
        const packet = pending.subarray(0, at + len)
        pending = pending.subarray(at + len)
        const isSuback = (packet[0] as number) >> 4 === 9
        if (isSuback) delayed++
        chain = chain
          .then(() => (isSuback ? new Promise<void>((r) => setTimeout(r, delayMs)) : undefined))
          .then(() => {
            if (!device.destroyed) device.write(packet)
          })
      }
    })
    const end = () => {
      device.destroy()
      upstream.destroy()
    }
    device.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: `mqtt://127.0.0.1:${port}`,
    delayed: () => delayed,
    close: () => {
      for (const s of sockets) s.destroy()
      return new Promise<void>((r) => server.close(() => r()))
    },
  }
}
