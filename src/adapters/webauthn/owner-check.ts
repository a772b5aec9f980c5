import { createHash } from 'node:crypto'
import {
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import { errorText } from '../../core/errors.js'
import type { OwnerRefusal } from '../../ports/owner-check.js'
import type { OwnerCredential } from '../../ports/owner-credentials.js'
import { ownerChallengeText } from '../../protocol/forms.js'

/**
 * The challenge an assertion for one request must sign, base64url: SHA-256 over
 * `ownerChallengeText(digest)` (the label, a newline, the digest). The phone computes the same
 * bytes (protocol/phone-side.ts `ownerChallenge`); bound to the digest, an assertion made for one
 * request is worth nothing for another.
 */
export function ownerChallenge(requestDigest: string): string {
  return createHash('sha256').update(ownerChallengeText(requestDigest), 'utf8').digest('base64url')
}

/** What the check needs of a registered credential. */
type CheckedCredential = Pick<OwnerCredential, 'id' | 'publicKey' | 'counter'>

/** Where the app is served: the WebAuthn origin and relying party id. */
export interface OwnerRelyingParty {
  /** e.g. `https://kitchen.local:8443` */
  readonly origin: string
  /** e.g. `kitchen.local` */
  readonly rpId: string
}

/**
 * Checks a phone's WebAuthn registration (made at pairing, on a secure page): it must verify and
 * the authenticator must have verified the user (screen lock, fingerprint or face). Any
 * attestation format `@simplewebauthn/server` knows is taken; the household's own phone is what is
 * being registered, so no maker's attestation is demanded. Throws a sentence naming what failed.
 */
export async function registerOwner(o: {
  readonly response: RegistrationResponseJSON
  /** The challenge the device handed out for this registration, base64url. */
  readonly challenge: string
  readonly party: OwnerRelyingParty
}): Promise<CheckedCredential> {
  let v: Awaited<ReturnType<typeof verifyRegistrationResponse>>
  try {
    v = await verifyRegistrationResponse({
      response: o.response,
      expectedChallenge: o.challenge,
      expectedOrigin: o.party.origin,
      expectedRPID: o.party.rpId,
      requireUserVerification: true,
    })
  } catch (err) {
    throw new Error(`the WebAuthn registration does not verify: ${errorText(err)}`)
  }
  if (!v.verified) throw new Error('the WebAuthn registration does not verify')
  const c = v.registrationInfo.credential
  return { id: c.id, publicKey: c.publicKey, counter: c.counter }
}

/**
 * Whether a critical yes carries its owner: an assertion by the phone's registered credential, over
 * the challenge of this very request, with the user verified. Never throws; the reason says why not.
 * `counter` is what to keep for the next check.
 */
export async function checkOwnerYes(o: {
  readonly credential: CheckedCredential
  readonly response: AuthenticationResponseJSON | undefined
  readonly requestDigest: string
  readonly party: OwnerRelyingParty
}): Promise<
  | { ok: true; counter: number }
  | { ok: false; reason: Exclude<OwnerRefusal, 'no-credential'>; detail?: string }
> {
  if (!o.response) return { ok: false, reason: 'no-assertion' }
  if (o.response.id !== o.credential.id || o.response.rawId !== o.credential.id) {
    return { ok: false, reason: 'unknown-credential' }
  }
  try {
    const v = await verifyAuthenticationResponse({
      response: o.response,
      expectedChallenge: ownerChallenge(o.requestDigest),
      expectedOrigin: o.party.origin,
      expectedRPID: o.party.rpId,
      credential: {
        id: o.credential.id,
        publicKey: new Uint8Array(o.credential.publicKey),
        counter: o.credential.counter,
      },
      requireUserVerification: true,
    })
    if (!v.verified) return { ok: false, reason: 'invalid-assertion' }
    if (!v.authenticationInfo.userVerified) return { ok: false, reason: 'not-user-verified' }
    return { ok: true, counter: v.authenticationInfo.newCounter }
  } catch (err) {
    const detail = errorText(err)
    // The library says so in words; the flag is the one refusal a phone can fix by itself.
    if (/user could not be verified|user verification/i.test(detail)) {
      return { ok: false, reason: 'not-user-verified', detail }
    }
    return { ok: false, reason: 'invalid-assertion', detail }
  }
}
