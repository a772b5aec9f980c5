import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { phoneRequestMacInput, signPhoneRequest } from '../../src/protocol/grant-ops.js'
import {
  decisionMacInput,
  newNonce,
  PhoneVerifier,
  signDecision,
} from '../../src/protocol/index.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

const anna = randomBytes(32)
const ben = randomBytes(32)
const digest = 'd'.repeat(64)

function setup(
  phones = new Map([
    ['anna', anna],
    ['ben', ben],
  ]),
) {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1, 12))
  const verifier = new PhoneVerifier({ phones: () => phones, clock, skewMs: 30_000, remember: 3 })
  /** A decision as a phone signs it, over the digest of the request it showed. */
  const decision = (o: { phone?: string; key?: Uint8Array; at?: number; nonce?: string } = {}) => {
    const fields = {
      id: 'req-1',
      decision: 'approve' as const,
      grant: 'once' as const,
      digest,
      phone: o.phone ?? 'anna',
      at: o.at ?? clock.now(),
      nonce: o.nonce ?? newNonce(),
    }
    return { ...fields, mac: signDecision(o.key ?? anna, fields) }
  }
  const check = (d: ReturnType<typeof decision>, within?: { from: number; to: number }) =>
    verifier.verify(d, decisionMacInput(d), within)
  return { clock, verifier, decision, check, phones }
}

describe('the verifier of a phone-signed message (docs/protocol.md, "What the device checks")', () => {
  it('accepts a fresh, well-signed message and hands back the key that verified it', () => {
    const { check, decision } = setup()
    expect(check(decision())).toEqual({ ok: true, key: anna })
    expect(check(decision({ phone: 'ben', key: ben }))).toEqual({ ok: true, key: ben })
  })

  it('unknown-phone: a phone that is not paired (or no longer is)', () => {
    const { check, decision, phones } = setup()
    expect(check(decision({ phone: 'mallory', key: randomBytes(32) }))).toMatchObject({
      ok: false,
      reason: 'unknown-phone',
    })
    const d = decision({ phone: 'ben', key: ben })
    phones.delete('ben')
    expect(check(d)).toMatchObject({ ok: false, reason: 'unknown-phone' })
  })

  it('bad-mac: signed with another key, over other text, or a MAC of the wrong shape', () => {
    const { verifier, check, decision } = setup()
    expect(check(decision({ key: ben }))).toMatchObject({ ok: false, reason: 'bad-mac' })
    const d = decision()
    // The same MAC over a request with another digest (the phone showed something else).
    const other = decisionMacInput({ ...d, digest: '0'.repeat(64) })
    expect(verifier.verify(d, other)).toMatchObject({ ok: false, reason: 'bad-mac' })
    expect(check({ ...d, decision: 'deny' } as never)).toMatchObject({ reason: 'bad-mac' })
    expect(check({ ...d, mac: d.mac.slice(0, 62) })).toMatchObject({ reason: 'bad-mac' })
  })

  it('outside-window: stale or from the future beyond the skew, either way, saying when', () => {
    const { clock, check, decision } = setup()
    const now = clock.now()
    expect(check(decision({ at: now - 30_000 }))).toMatchObject({ ok: true })
    expect(check(decision({ at: now + 30_000 }))).toMatchObject({ ok: true })
    expect(check(decision({ at: now - 30_001 }))).toEqual({
      ok: false,
      reason: 'outside-window',
      fields: { at: now - 30_001, now },
    })
    expect(check(decision({ at: now + 30_001 }))).toMatchObject({ reason: 'outside-window' })
  })

  it('outside-window against the life of what it answers: createdAt..expiresAt, never the future', async () => {
    const { clock, check, decision } = setup()
    const created = clock.now()
    const within = { from: created, to: created + 60_000 }
    await clock.advance(50_000)
    // Older than the skew by our clock, but inside the request's life: a slow phone still counts.
    expect(check(decision({ at: created + 1000 }), within)).toMatchObject({ ok: true })
    expect(check(decision({ at: created - 30_001 }), within)).toMatchObject({
      reason: 'outside-window',
    })
    // Within the request's life plus skew, but ahead of our clock by more than the skew.
    expect(check(decision({ at: clock.now() + 30_001 }), within)).toMatchObject({
      reason: 'outside-window',
    })
    await clock.advance(60_000)
    expect(check(decision({ at: created + 90_001 }), within)).toMatchObject({
      reason: 'outside-window',
    })
  })

  it('replayed-nonce: a nonce is one use per phone; refused messages leave no nonce behind', () => {
    const { check, decision } = setup()
    const nonce = newNonce()
    expect(check(decision({ key: ben, nonce }))).toMatchObject({ reason: 'bad-mac' })
    // The forgery left its nonce nowhere: the real message with it passes, once.
    expect(check(decision({ nonce }))).toMatchObject({ ok: true })
    expect(check(decision({ nonce }))).toEqual({ ok: false, reason: 'replayed-nonce', fields: {} })
    // Another phone's nonces are its own, and both are held.
    expect(check(decision({ phone: 'ben', key: ben, nonce }))).toMatchObject({ ok: true })
    expect(check(decision({ phone: 'ben', key: ben, nonce }))).toMatchObject({
      reason: 'replayed-nonce',
    })
    expect(check(decision({ nonce }))).toMatchObject({ reason: 'replayed-nonce' })
  })

  it('remembers a bounded number of nonces, forgetting the oldest', () => {
    const { check, decision } = setup()
    const first = newNonce()
    expect(check(decision({ nonce: first }))).toMatchObject({ ok: true })
    const later = Array.from({ length: 5 }, () => newNonce())
    for (const nonce of later) expect(check(decision({ nonce }))).toMatchObject({ ok: true })
    // Three are held (remember: 3): the newest are still refused, the oldest was let go — the
    // time window, not this memory, is what keeps an old message out.
    for (const nonce of later.slice(-3)) {
      expect(check(decision({ nonce }))).toMatchObject({ reason: 'replayed-nonce' })
    }
    expect(check(decision({ nonce: first }))).toMatchObject({ ok: true })
  })

  it('checks in the documented order: the first failing check is the reason', () => {
    const { clock, check, decision } = setup()
    const stale = clock.now() - 3_600_000
    // Unknown phone and a bad MAC and stale: unknown-phone.
    expect(check(decision({ phone: 'mallory', key: ben, at: stale }))).toMatchObject({
      reason: 'unknown-phone',
    })
    // Bad MAC and stale: bad-mac.
    expect(check(decision({ key: ben, at: stale }))).toMatchObject({ reason: 'bad-mac' })
    // Stale and a replayed nonce: outside-window (and the nonce is not spent).
    const nonce = newNonce()
    expect(check(decision({ nonce, at: stale }))).toMatchObject({ reason: 'outside-window' })
    expect(check(decision({ nonce }))).toMatchObject({ ok: true })
  })

  it('verifies a conversation request the same way, over its own signed form', () => {
    const { clock, verifier } = setup()
    const r = {
      id: 'r1',
      device: 'kitchen',
      phone: 'anna',
      op: 'revoke' as const,
      args: { grant: 'g1' },
      at: clock.now(),
      nonce: newNonce(),
    }
    const signed = { ...r, mac: signPhoneRequest(anna, r) }
    expect(verifier.verify(signed, phoneRequestMacInput(signed))).toEqual({ ok: true, key: anna })
    const changed = { ...signed, args: { grant: 'g2' } }
    expect(verifier.verify(changed, phoneRequestMacInput(changed))).toMatchObject({
      reason: 'bad-mac',
    })
  })
})
