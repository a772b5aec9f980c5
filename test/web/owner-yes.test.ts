import type { CDPSession, Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { ownerChallenge } from '../../src/adapters/webauthn/owner-check.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { type PhoneWorld, phoneWorld } from '../phone/world.js'
import { openTab, type PhonePage, pairAndConnect, pairLink } from './app-harness.js'
import { missingChromium } from './browser.js'
import { recordBroker } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()

/**
 * The owner's yes in Chromium (docs/phone-app.md, "Critical requests need you"): the app on
 * http://localhost (a secure context, and a valid WebAuthn relying party id, where 127.0.0.1 is
 * not), Chromium's virtual authenticator (CDP `WebAuthn`) standing for the phone's fingerprint
 * reader, the device's real approver, gate and door on a real Mosquitto.
 */
describe.skipIf(skip !== undefined)("the owner's yes in Chromium", { timeout: 90_000 }, () => {
  const suite = webSuite()
  const worlds: PhoneWorld[] = []
  afterEach(async () => {
    for (const w of worlds.splice(0)) await w.close()
  })

  /** The app's address as localhost, and a device that expects the owner's yes from there. */
  async function world(): Promise<{ w: PhoneWorld; appUrl: string }> {
    const appUrl = suite.appUrl.replace('//127.0.0.1:', '//localhost:')
    const origin = new URL(appUrl).origin
    const w = await phoneWorld(suite.broker, { party: { origin, rpId: 'localhost' } })
    worlds.push(w)
    return { w, appUrl }
  }

  /** A phone with a platform authenticator that verifies its user (a fingerprint reader). */
  async function phoneWithFingerprint(): Promise<{
    phone: PhonePage
    cdp: CDPSession
    authenticatorId: string
  }> {
    const phone = await suite.blank()
    const cdp = await phone.context.newCDPSession(phone.page)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    })
    return { phone, cdp, authenticatorId }
  }

  /** Pairs anna, and registers her fingerprint from the Speakers screen, as the app offers it. */
  async function pairAndRegister(w: PhoneWorld, appUrl: string, phone: PhonePage): Promise<void> {
    await pairAndConnect(phone, pairLink(appUrl, w, 'anna', suite.broker.url), 'anna', w.deviceId)
    const speaker = phone.page.locator(`[data-speaker="${w.deviceId}"]`)
    await speaker.locator('[data-owner-register]').click()
    await speaker.locator('[data-owner="registered"]').waitFor()
    expect(w.store.owners.ownerCredential('anna')).toMatchObject({ phone: 'anna' })
    await openTab(phone.page, 'approvals')
  }

  /** An assertion the page's own authenticator makes, as JSON, outside the app. */
  function assertion(
    page: Page,
    o: { challenge: string; credentialId: string; userVerification?: string },
  ): Promise<unknown> {
    const args = JSON.stringify({ userVerification: 'required', ...o })
    // A string: the test tree has no DOM types; this runs in the page.
    return page.evaluate(`(async ({ challenge, credentialId, userVerification }) => {
      const bytes = (s) => {
        const b = s.replace(/-/g, '+').replace(/_/g, '/')
        return Uint8Array.from(atob(b + '='.repeat((4 - (b.length % 4)) % 4)), (c) => c.charCodeAt(0))
      }
      const c = await navigator.credentials.get({
        publicKey: {
          challenge: bytes(challenge),
          rpId: 'localhost',
          allowCredentials: [{ type: 'public-key', id: bytes(credentialId) }],
          userVerification,
        },
      })
      return c.toJSON()
    })(${args})`)
  }

  it('registered at pairing, a user-verified assertion from the app approves the door and it opens', async () => {
    const { w, appUrl } = await world()
    const seen = await recordBroker(w)
    const { phone } = await phoneWithFingerprint()
    await pairAndRegister(w, appUrl, phone)
    const registeredAt = w.store.owners.ownerCredential('anna')?.counter ?? 0
    const q = w.call('unlock_door', { door: 'front' })
    const id = (await q.request).id
    const card = suite.card(phone, id)
    expect(await card.locator('.critical').textContent()).toContain('fingerprint')
    await card.getByRole('button', { name: 'Approve: unlock the front door' }).click()
    expect(await q.outcome).toMatchObject({ ok: true })
    expect(w.unlocked).toEqual(['front'])
    await card.and(phone.page.locator('[data-state="approved"]')).waitFor()
    const [decision] = seen.json('/decision')
    expect(decision).toMatchObject({ decision: 'approve', phone: 'anna' })
    expect(decision?.owner).toMatchObject({
      id: w.store.owners.ownerCredential('anna')?.id,
      type: 'public-key',
    })
    // The authenticator's signature counter moved on, and the device kept it.
    expect(w.store.owners.ownerCredential('anna')?.counter).toBeGreaterThan(registeredAt)
  })

  it('refuses a yes with no assertion, a wrong credential, or an assertion for another request — the door stays shut', async () => {
    const { w, appUrl } = await world()
    const { phone } = await phoneWithFingerprint()
    await pairAndRegister(w, appUrl, phone)
    const credentialId = w.store.owners.ownerCredential('anna')?.id ?? ''
    const anna = await w.approvals('anna')
    const q = w.call('unlock_door', { door: 'front' })
    const r = await anna.waitFor((await q.request).id)
    const refused = (reason: string) => w.refusedDecisions(reason)
    const send = async (reason: string, owner: unknown) => {
      await anna.decide(r.id, 'approve', 'once', owner)
      await until(() => refused(reason) === 1, `refused as ${reason}`)
      expect(w.unlocked).toEqual([])
    }
    // None: an approve signed with anna's key but without her fingerprint.
    await send('no-assertion', undefined)
    // A wrong credential: another one this phone's authenticator holds, never registered.
    const other = (await phone.page.evaluate(`navigator.credentials
      .create({
        publicKey: {
          challenge: new Uint8Array(32),
          rp: { id: 'localhost', name: 'elsewhere' },
          user: { id: new Uint8Array([1, 2, 3]), name: 'x', displayName: 'x' },
          pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
          authenticatorSelection: { userVerification: 'required' },
        },
      })
      .then((c) => c.id)`)) as string
    await send(
      'unknown-credential',
      await assertion(phone.page, { challenge: ownerChallenge(r.digest), credentialId: other }),
    )
    // The registered credential, but over another request's challenge.
    await send(
      'invalid-assertion',
      await assertion(phone.page, { challenge: ownerChallenge('1'.repeat(64)), credentialId }),
    )
    // Still pending, and a no needs no fingerprint.
    await anna.decide(r.id, 'deny')
    expect(await q.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
    expect(w.unlocked).toEqual([])
  })

  it('a yes the speaker refuses at the owner check comes back to the card with why, Approve again offered; the next one opens the door', async () => {
    const { w, appUrl } = await world()
    const { phone } = await phoneWithFingerprint()
    await pairAndRegister(w, appUrl, phone)
    const kept = w.store.owners.ownerCredential('anna')
    // The speaker has seen a later counter than this authenticator will give (a cloned key, or a
    // phone restored from an old backup): its next assertion does not verify.
    w.store.owners.advanceOwnerCounter('anna', kept?.id ?? '', 1_000_000)
    const q = w.call('unlock_door', { door: 'front' })
    const id = (await q.request).id
    const card = suite.card(phone, id)
    const approve = card.getByRole('button', { name: 'Approve: unlock the front door' })
    await approve.click()
    await until(() => w.refusedDecisions('invalid-assertion') === 1, 'refused as invalid-assertion')
    await card.locator('.problem').waitFor()
    expect(await card.locator('.problem').textContent()).toContain(
      'could not verify your fingerprint, face or screen lock for this request',
    )
    // Offered again, not "sent, waiting": the request is still pending on the speaker.
    expect(await approve.isEnabled()).toBe(true)
    expect(await card.locator('[data-delivery]').count()).toBe(0)
    expect(w.unlocked).toEqual([])
    // The speaker's record put back as it was registered: the same tap now opens the door.
    if (kept) w.store.owners.putOwnerCredential({ ...kept, counter: 0 })
    await approve.click()
    expect(await q.outcome).toMatchObject({ ok: true })
    expect(w.unlocked).toEqual(['front'])
  })

  it('isUserVerified false: the app sends nothing and says why; an assertion without the flag is refused — the door stays shut', async () => {
    const { w, appUrl } = await world()
    const seen = await recordBroker(w)
    const { phone, cdp, authenticatorId } = await phoneWithFingerprint()
    await pairAndRegister(w, appUrl, phone)
    const credentialId = w.store.owners.ownerCredential('anna')?.id ?? ''
    // The fingerprint is not the owner's from here on.
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false })
    const q = w.call('unlock_door', { door: 'front' })
    const id = (await q.request).id
    const card = suite.card(phone, id)
    await card.getByRole('button', { name: 'Approve: unlock the front door' }).click()
    await card.locator('.problem').waitFor()
    expect(await card.locator('.problem').textContent()).toContain(
      'Your fingerprint, face or screen lock was not confirmed, so nothing was sent.',
    )
    expect(seen.json('/decision')).toEqual([])
    // An assertion the authenticator makes without verifying the user, sent as anna's yes.
    const anna = await w.approvals('anna')
    const r = await anna.waitFor(id)
    const unverified = await assertion(phone.page, {
      challenge: ownerChallenge(r.digest),
      credentialId,
      userVerification: 'discouraged',
    })
    await anna.decide(id, 'approve', 'once', unverified)
    await until(() => w.refusedDecisions('not-user-verified') === 1, 'refused as not user-verified')
    expect(w.unlocked).toEqual([])
    await card.getByRole('button', { name: /^Deny/ }).click()
    expect(await q.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
    expect(w.unlocked).toEqual([])
  })
})
