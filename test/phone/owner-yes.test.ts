import { randomBytes } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ownerChallenge } from '../../src/adapters/webauthn/owner-check.js'
import { phone } from '../../src/app/commands/phone.js'
import { DeviceRefusal } from '../../src/phone/conversations.js'
import type { ApprovalRequest } from '../../src/ports/approver.js'
import { decisionMessage, verifyReply } from '../../src/protocol/phone-side.js'
import { freePort, mosquittoBroker, type TestBroker } from '../helpers/brokers.js'
import { captureIo } from '../helpers/capture-io.js'
import { SoftAuthenticator } from '../helpers/soft-authenticator.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { type PhoneWorld, phoneWorld } from './world.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
const party = { origin: 'https://kitchen.local:8443', rpId: 'kitchen.local' }

/**
 * The owner's yes end to end on the device (docs/protocol.md, "The owner's yes"): a real
 * Mosquitto with the per-phone ACL, the device's approver, gate and tools, the phones' signed
 * requests and decisions; the phone's authenticator is the software one (the browser's virtual
 * authenticator is test/web/owner-yes.test.ts).
 */
describe.skipIf(skip !== undefined)(
  "the owner's yes on the device (Mosquitto)",
  { timeout: 60_000 },
  () => {
    let broker: TestBroker
    const worlds: PhoneWorld[] = []
    beforeAll(async () => {
      broker = mosquittoBroker(await freePort())
      await broker.start()
    }, 30_000)
    afterAll(async () => {
      await broker?.stop()
    })
    afterEach(async () => {
      for (const w of worlds.splice(0)) await w.close()
    })
    const world = async (ownerRequired = false) => {
      const w = await phoneWorld(broker, { party, ownerRequired })
      worlds.push(w)
      return w
    }

    /** Anna registers her phone's authenticator over the signed channel. */
    async function register(w: PhoneWorld, auth = new SoftAuthenticator(party.rpId, party.origin)) {
      const anna = await w.phone('anna')
      const status = (await anna.request('owner_status', {})).done
      expect(status).toMatchObject({ registered: false, required: false, ...party })
      const challenge = String(status.challenge)
      const done = (await anna.request('owner_register', { credential: auth.create(challenge) }))
        .done
      expect(done).toEqual({ registered: true, credentialId: auth.id })
      return { auth, anna }
    }

    const door = (w: PhoneWorld) => w.call('unlock_door', { door: 'front' })

    const refused = (w: PhoneWorld, reason: string) => w.refusedDecisions(reason)

    it('registers at pairing: the credential is stored for the phone, said registered, and not replaced by a second registration', async () => {
      const w = await world()
      const { auth, anna } = await register(w)
      expect(w.store.owners.ownerCredential('anna')).toMatchObject({
        phone: 'anna',
        id: auth.id,
        counter: 0,
      })
      const again = (await anna.request('owner_status', {})).done
      expect(again).toMatchObject({ registered: true, credentialId: auth.id })
      const other = new SoftAuthenticator(party.rpId, party.origin)
      await expect(
        anna.request('owner_register', { credential: other.create(String(again.challenge)) }),
      ).rejects.toThrow(/already has its owner registered/)
      expect(w.store.owners.ownerCredential('anna')?.id).toBe(auth.id)
    })

    it('refuses a registration without user verification, over a challenge it did not hand out, or for another origin — nothing is stored', async () => {
      const w = await world()
      const anna = await w.phone('anna')
      const auth = new SoftAuthenticator(party.rpId, party.origin)
      const c1 = String((await anna.request('owner_status', {})).done.challenge)
      await expect(
        anna.request('owner_register', { credential: auth.create(c1, { userVerified: false }) }),
      ).rejects.toThrow(DeviceRefusal)
      // The challenge was used up by that attempt: the next needs a fresh one.
      await expect(anna.request('owner_register', { credential: auth.create(c1) })).rejects.toThrow(
        /no registration is under way/,
      )
      const c2 = String((await anna.request('owner_status', {})).done.challenge)
      await expect(
        anna.request('owner_register', {
          credential: auth.create(randomBytes(32).toString('base64url')),
        }),
      ).rejects.toThrow(/could not verify this phone's credential/)
      const c3 = String((await anna.request('owner_status', {})).done.challenge)
      const elsewhere = new SoftAuthenticator('evil.example', 'https://evil.example')
      await expect(
        anna.request('owner_register', { credential: elsewhere.create(c3) }),
      ).rejects.toThrow(/expects the app at https:\/\/kitchen\.local:8443/)
      await expect(anna.request('owner_register', { credential: { id: 'x' } })).rejects.toThrow(
        /not a WebAuthn registration/,
      )
      expect(c2).not.toBe(c1)
      expect(w.store.owners.ownerPhones()).toEqual([])
    })

    it('a user-verified assertion over this request opens the door; the counter moves on', async () => {
      const w = await world()
      const { auth } = await register(w)
      const phone = await w.approvals('anna')
      const q = door(w)
      const r = await phone.waitFor((await q.request).id)
      await phone.decide(r.id, 'approve', 'once', auth.get(ownerChallenge(r.digest)))
      expect(await q.outcome).toMatchObject({ ok: true })
      expect(w.unlocked).toEqual(['front'])
      expect(w.store.owners.ownerCredential('anna')?.counter).toBe(1)
    })

    it('refuses a critical yes with no assertion, a wrong credential, an assertion for another request, or no user verification — the door stays shut, each refusal counted', async () => {
      const w = await world()
      const { auth } = await register(w)
      const phone = await w.approvals('anna')
      const q = door(w)
      const r = await phone.waitFor((await q.request).id)
      const stranger = new SoftAuthenticator(party.rpId, party.origin)
      const tries: Array<[string, unknown]> = [
        ['no-assertion', undefined],
        ['unknown-credential', stranger.get(ownerChallenge(r.digest))],
        ['invalid-assertion', auth.get(ownerChallenge('0'.repeat(64)))],
        ['not-user-verified', auth.get(ownerChallenge(r.digest), { userVerified: false })],
        // The stranger's signature under anna's credential id.
        [
          'invalid-assertion',
          { ...stranger.get(ownerChallenge(r.digest)), id: auth.id, rawId: auth.id },
        ],
        ['invalid-assertion', { not: 'an assertion' }],
      ]
      for (const [reason, owner] of tries) {
        const before = refused(w, reason)
        await phone.decide(r.id, 'approve', 'once', owner)
        await until(() => refused(w, reason) === before + 1, `refused as ${reason}`)
        expect(w.unlocked).toEqual([])
      }
      const logged = w.logger.entries.filter((e) => e.fields.event === 'decision_rejected')
      expect(logged.map((e) => e.fields.reason)).toEqual(
        expect.arrayContaining(['no-assertion', 'not-user-verified']),
      )
      // Still pending; a deny needs no assertion and ends it.
      await phone.decide(r.id, 'deny')
      expect(await q.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
      expect(w.unlocked).toEqual([])
    })

    it('the phone whose yes failed the check is told why, signed for it alone; a forged yes is told nothing', async () => {
      const w = await world()
      await register(w)
      const heard: Array<{ topic: string; payload: Buffer }> = []
      const spy = await w.raw()
      spy.on('message', (topic, payload) => heard.push({ topic, payload }))
      await spy.subscribeAsync(`${w.topics.base}/conversations/reply/#`, { qos: 1 })
      const phone = await w.approvals('anna')
      const q = door(w)
      const r = await phone.waitFor((await q.request).id)
      await phone.decide(r.id, 'approve', 'once', undefined)
      await until(() => heard.length === 1, 'the refusal told to anna')
      const told = heard[0]
      expect(told?.topic).toBe(`${w.topics.base}/conversations/reply/anna`)
      const anna = { device: w.deviceId, phone: 'anna', key: w.keys.get('anna') as Uint8Array }
      const v = verifyReply(anna, told?.payload ?? Buffer.alloc(0))
      expect(v).toMatchObject({
        ok: true,
        value: {
          re: r.id,
          kind: 'error',
          body: { code: 'NOC_ERR_OWNER_REFUSED', reason: 'no-assertion' },
        },
      })
      // Under another key in anna's name: refused as bad-mac, and no word back to anyone.
      const forged = decisionMessage(
        { ...anna, key: randomBytes(32) },
        r,
        'approve',
        'once',
        Date.now(),
      )
      await spy.publishAsync(w.topics.decision(r.id), JSON.stringify(forged), { qos: 1 })
      await until(() => refused(w, 'bad-mac') === 1, 'the forged yes refused')
      await new Promise((res) => setTimeout(res, 300))
      expect(heard).toHaveLength(1)
      expect(w.unlocked).toEqual([])
      await phone.decide(r.id, 'deny')
      expect(await q.outcome).toMatchObject({ ok: false })
    })

    it('the terminal phone says at once that its yes was not taken, and why; the request stays pending and its watch shows it', async () => {
      const w = await world(true)
      const env = w.phoneEnv('ben')
      const q = door(w)
      const id = (await q.request).id
      const watching = captureIo(env)
      const stop = new AbortController()
      const watch = phone(['watch'], watching.io, stop.signal)
      await until(() => watching.text.out.includes(`pending  ${id}`), 'the request watched')
      const approve = captureIo(env)
      // Ended by the device's signed refusal, not by the outcome's 10 s wait running out.
      expect(await phone(['approve', id], approve.io)).toBe(1)
      expect(approve.text.err).not.toContain('no outcome')
      expect(approve.text.err).toContain(
        `the speaker did not take this yes: this phone has no screen-lock key registered with the speaker (no-credential); ${id} is still pending`,
      )
      await until(() => watching.text.out.includes(`not taken  ${id}`), 'the watch told')
      expect(watching.text.out).toContain(`not taken  ${id}  (no-credential: `)
      expect(refused(w, 'no-credential')).toBe(1)
      expect(w.unlocked).toEqual([])
      const deny = captureIo(env)
      expect(await phone(['deny', id], deny.io)).toBe(0)
      expect(await q.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
      stop.abort()
      expect(await watch).toBe(0)
    })

    it('an assertion whose counter is behind the one kept (a replay, a cloned authenticator) is refused', async () => {
      const w = await world()
      const { auth } = await register(w)
      const phone = await w.approvals('anna')
      const first = door(w)
      const r1 = await phone.waitFor((await first.request).id)
      await phone.decide(r1.id, 'approve', 'once', auth.get(ownerChallenge(r1.digest)))
      expect(await first.outcome).toMatchObject({ ok: true })
      // Another copy of the authenticator has signed ten times since.
      expect(w.store.owners.advanceOwnerCounter('anna', auth.id, 10)).toBe(true)
      const second = door(w)
      const r2 = await phone.waitFor((await second.request).id)
      await phone.decide(r2.id, 'approve', 'once', auth.get(ownerChallenge(r2.digest)))
      await until(() => refused(w, 'invalid-assertion') === 1, 'the stale counter refused')
      await phone.decide(r2.id, 'deny')
      expect(await second.outcome).toMatchObject({ ok: false })
      expect(w.unlocked).toEqual(['front'])
      expect(w.store.owners.ownerCredential('anna')?.counter).toBe(10)
    })

    it('"if-registered": a phone without a credential approves a critical tool as before; "always": it may deny and approve ordinary tools, never a critical one', async () => {
      const lenient = await world(false)
      const ben = await lenient.approvals('ben')
      const q = door(lenient)
      await ben.decide((await ben.waitFor((await q.request).id)).id, 'approve')
      expect(await q.outcome).toMatchObject({ ok: true })

      const strict = await world(true)
      const benStrict = await strict.approvals('ben')
      const d = door(strict)
      const r = await benStrict.waitFor((await d.request).id)
      await benStrict.decide(r.id, 'approve')
      await until(() => refused(strict, 'no-credential') === 1, 'refused: no credential')
      expect(strict.unlocked).toEqual([])
      await benStrict.decide(r.id, 'deny')
      expect(await d.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
      const light = strict.call('set_light', { room: 'hall' }).outcome
      await until(() => strict.asked.some((a) => a.tool === 'set_light'), 'the light request')
      const lr = strict.asked.find((a) => a.tool === 'set_light') as ApprovalRequest
      await benStrict.decide((await benStrict.waitFor(lr.id)).id, 'approve')
      expect(await light).toMatchObject({ ok: true })
      expect(strict.lit).toEqual(['hall'])
      expect(strict.unlocked).toEqual([])
    })

    it('revoking the phone removes its credential: paired again under the same id, it starts with none', async () => {
      const w = await world()
      await register(w)
      expect(w.store.owners.ownerPhones()).toEqual(['anna'])
      // `nocturn pair --revoke anna` then `nocturn pair anna`: a new key under the same id.
      w.keys.set('anna', randomBytes(32))
      const anna = await w.phone('anna')
      expect((await anna.request('owner_status', {})).done).toMatchObject({ registered: false })
      expect(w.store.owners.ownerPhones()).toEqual([])
      // Revoked while the device was stopped: forgotten at the next start.
      await register(w)
      w.keys.delete('anna')
      w.owners.prune()
      expect(w.store.owners.ownerPhones()).toEqual([])
    })
  },
)
