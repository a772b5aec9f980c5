import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  checkOwnerYes,
  ownerChallenge,
  registerOwner,
} from '../../src/adapters/webauthn/owner-check.js'
import type { OwnerCredential } from '../../src/ports/owner-credentials.js'
import { SoftAuthenticator } from '../helpers/soft-authenticator.js'

const party = { origin: 'https://kitchen.local:8443', rpId: 'kitchen.local' }
const digest = 'a'.repeat(64)
const other = 'b'.repeat(64)

async function registered(): Promise<{
  auth: SoftAuthenticator
  credential: Pick<OwnerCredential, 'id' | 'publicKey' | 'counter'>
}> {
  const auth = new SoftAuthenticator(party.rpId, party.origin)
  const challenge = randomBytes(32).toString('base64url')
  const credential = await registerOwner({
    response: auth.create(challenge),
    challenge,
    party,
  })
  return { auth, credential }
}

describe("the owner's yes for a critical tool (WebAuthn, not yet wired into the decision path)", () => {
  it('registers a user-verified credential, and a user-verified assertion over this request passes', async () => {
    const { auth, credential } = await registered()
    expect(credential).toMatchObject({ id: auth.id, counter: 0 })
    const r = await checkOwnerYes({
      credential,
      response: auth.get(ownerChallenge(digest)),
      requestDigest: digest,
      party,
    })
    expect(r).toEqual({ ok: true, counter: 1 })
  })

  it('refuses no assertion, an assertion for another request, one without user verification, one from another authenticator, and a replayed one', async () => {
    const { auth, credential } = await registered()
    const check = (response: Parameters<typeof checkOwnerYes>[0]['response'], c = credential) =>
      checkOwnerYes({ credential: c, response, requestDigest: digest, party })
    expect(await check(undefined)).toEqual({ ok: false, reason: 'no-assertion' })
    expect(await check(auth.get(ownerChallenge(other)))).toMatchObject({
      ok: false,
      reason: 'invalid-assertion',
    })
    expect(await check(auth.get(ownerChallenge(digest), { userVerified: false }))).toMatchObject({
      ok: false,
      reason: 'not-user-verified',
    })
    const stranger = new SoftAuthenticator(party.rpId, party.origin)
    expect(await check(stranger.get(ownerChallenge(digest)))).toMatchObject({
      ok: false,
      reason: 'unknown-credential',
    })
    // The stranger's assertion under our credential's id: its signature does not verify.
    const forged = { ...stranger.get(ownerChallenge(digest)), id: auth.id, rawId: auth.id }
    expect(await check(forged)).toMatchObject({ ok: false, reason: 'invalid-assertion' })
    // A good assertion, then the same again once the counter has moved on.
    const good = auth.get(ownerChallenge(digest))
    const first = await check(good)
    expect(first).toMatchObject({ ok: true })
    const moved = { ...credential, counter: first.ok ? first.counter : 0 }
    expect(await check(good, moved)).toMatchObject({ ok: false, reason: 'invalid-assertion' })
  })

  it('refuses a registration without user verification, or for another challenge', async () => {
    const auth = new SoftAuthenticator(party.rpId, party.origin)
    const challenge = randomBytes(32).toString('base64url')
    await expect(
      registerOwner({
        response: auth.create(challenge, { userVerified: false }),
        challenge,
        party,
      }),
    ).rejects.toThrow(/does not verify/)
    await expect(
      registerOwner({ response: auth.create('other'), challenge, party }),
    ).rejects.toThrow(/does not verify/)
  })

  it('the challenge is SHA-256 over the label and the digest', () => {
    expect(ownerChallenge(digest)).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(ownerChallenge(digest)).not.toBe(ownerChallenge(other))
  })
})
