import { createHash, randomBytes } from 'node:crypto'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { BoundedMap } from '../../core/bounded-map.js'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type { OwnerCheck, OwnerVerdict } from '../../ports/owner-check.js'
import type { OwnerCredential, OwnerCredentialStore } from '../../ports/owner-credentials.js'
import { ownerAssertionSchema, ownerRegistrationSchema } from '../../protocol/owner-ops.js'
import type { OwnerStatus } from '../../protocol/phone-side.js'
import type { PhoneKeys } from '../../protocol/phone-verifier.js'
import type { OwnerRelyingParty } from './owner-check.js'

/**
 * The checks and `@simplewebauthn/server` under them, loaded at the first registration or critical
 * yes: most starts never need them, and a start on a Pi pays for every module it loads.
 */
const checks = () => import('./owner-check.js')

/** A registration takes a person a minute at most; the challenge is good for five. */
const CHALLENGE_MS = 5 * 60_000

export interface WebAuthnOwnersOptions {
  readonly store: OwnerCredentialStore
  /** The paired phones' keys: a credential belongs to the pairing it was registered under. */
  readonly phones: PhoneKeys
  readonly party: OwnerRelyingParty
  /** true: a phone without a credential may not approve a critical tool at all. */
  readonly required: boolean
  readonly clock: Clock
  readonly logger: Logger
}

/**
 * The owner check on `@simplewebauthn/server` (owner-check.ts) and the store: one credential per
 * phone, registered over a challenge this device handed out, tied to the phone's pairing key — a
 * revoked phone's credential is forgotten the moment it is looked at, and at every start (`prune`).
 */
export class WebAuthnOwners implements OwnerCheck {
  readonly #o: WebAuthnOwnersOptions
  readonly #log: Logger
  /** The registration challenge each phone was last handed, one use. */
  readonly #challenges = new BoundedMap<string, { challenge: string; expiresAt: number }>(256)

  constructor(options: WebAuthnOwnersOptions) {
    this.#o = options
    this.#log = options.logger.child({ component: 'owner-check' })
  }

  /** Forgets the credentials of phones no longer paired (revoked while the device was stopped). */
  prune(): void {
    for (const phone of this.#o.store.ownerPhones()) this.#current(phone)
  }

  status(phone: string): OwnerStatus {
    const challenge = randomBytes(32).toString('base64url')
    const challengeExpiresAt = this.#o.clock.now() + CHALLENGE_MS
    this.#challenges.set(phone, { challenge, expiresAt: challengeExpiresAt })
    const c = this.#current(phone)
    return {
      registered: c !== undefined,
      ...(c && { credentialId: c.id }),
      required: this.#o.required,
      rpId: this.#o.party.rpId,
      origin: this.#o.party.origin,
      challenge,
      challengeExpiresAt,
    }
  }

  async register(phone: string, response: unknown): Promise<{ credentialId: string }> {
    const parsed = ownerRegistrationSchema.safeParse(response)
    if (!parsed.success) throw bad('credential: not a WebAuthn registration as JSON')
    const handed = this.#challenges.get(phone)
    if (!handed || handed.expiresAt <= this.#o.clock.now()) {
      throw bad(
        'no registration is under way for this phone (or it took over 5 minutes): start again',
      )
    }
    if (this.#current(phone)) {
      throw bad(
        'this phone already has its owner registered with this speaker; to register another, the phone is paired again (nocturn pair --revoke, then nocturn pair)',
      )
    }
    const key = this.#o.phones().get(phone)
    if (!key) throw bad('this phone is not paired')
    // One use: a second registration needs a fresh challenge.
    this.#challenges.delete(phone)
    const { registerOwner } = await checks()
    let checked: Awaited<ReturnType<typeof registerOwner>>
    try {
      checked = await registerOwner({
        response: parsed.data as RegistrationResponseJSON,
        challenge: handed.challenge,
        party: this.#o.party,
      })
    } catch (err) {
      this.#log.warn(
        { event: 'owner_registration_refused', phone, err: errorText(err) },
        'owner registration refused',
      )
      throw bad(
        `the speaker could not verify this phone's credential (it expects the app at ${this.#o.party.origin}, with the screen lock, fingerprint or face confirmed)`,
      )
    }
    this.#o.store.putOwnerCredential({
      phone,
      ...checked,
      keyTag: keyTagOf(key),
      createdAt: this.#o.clock.now(),
    })
    this.#log.info({ event: 'owner_registered', phone }, 'owner credential registered')
    return { credentialId: checked.id }
  }

  async checkYes(phone: string, assertion: unknown, digest: string): Promise<OwnerVerdict> {
    const c = this.#current(phone)
    if (!c)
      return this.#o.required ? { ok: false, reason: 'no-credential' } : { ok: true, owner: false }
    if (assertion === undefined) return { ok: false, reason: 'no-assertion' }
    const parsed = ownerAssertionSchema.safeParse(assertion)
    if (!parsed.success) {
      return { ok: false, reason: 'invalid-assertion', detail: 'not a WebAuthn assertion as JSON' }
    }
    const { checkOwnerYes } = await checks()
    const r = await checkOwnerYes({
      credential: c,
      response: parsed.data as AuthenticationResponseJSON,
      requestDigest: digest,
      party: this.#o.party,
    })
    if (!r.ok) return r
    // An authenticator that keeps no counter says 0 every time; any other must move it on.
    const kept = r.counter === 0 && c.counter === 0
    if (!kept && !this.#o.store.advanceOwnerCounter(phone, c.id, r.counter)) {
      return {
        ok: false,
        reason: 'invalid-assertion',
        detail: 'the signature counter did not move on',
      }
    }
    return { ok: true, owner: true }
  }

  /** The phone's credential if it belongs to its pairing now; a stale one is forgotten. */
  #current(phone: string): OwnerCredential | undefined {
    const c = this.#o.store.ownerCredential(phone)
    if (!c) return undefined
    const key = this.#o.phones().get(phone)
    if (key && keyTagOf(key) === c.keyTag) return c
    this.#o.store.removeOwnerCredential(phone)
    this.#log.info(
      { event: 'owner_credential_forgotten', phone },
      'owner credential of a revoked pairing forgotten',
    )
    return undefined
  }
}

/** Names a pairing key without revealing it: SHA-256 of a 256-bit random key. */
function keyTagOf(key: Uint8Array): string {
  return createHash('sha256')
    .update('nocturn-owner-key-tag-v1\n')
    .update(key)
    .digest('hex')
    .slice(0, 32)
}

function bad(message: string): NocturnError {
  return new NocturnError('NOC_ERR_BAD_REQUEST', message)
}
