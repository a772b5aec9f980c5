/**
 * The three canonical forms of protocol v1 (docs/protocol.md spells them out with a test vector):
 *
 * - request digest = hex SHA-256 of the canonical JSON of the request object without `digest` and
 *   `macs` (keys sorted at every level, no whitespace; the phone hashes what it received, unknown
 *   fields included, so nothing can be added unnoticed);
 * - request MAC (one per paired phone) = hex HMAC-SHA256(phone key, "nocturn-request-v1\n" + digest);
 * - decision MAC = hex HMAC-SHA256(phone key, the decision lines below joined by "\n");
 * - outcome MAC (one per paired phone) = hex HMAC-SHA256(phone key, the outcome lines below).
 *
 * Every field in the line forms is drawn from an alphabet without "\n", so the joins are unambiguous.
 * The signed texts come from forms.ts, which the phone app bundles too: one source for both sides.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { decisionMacText, outcomeMacText, requestDigestInput, requestMacText } from './forms.js'
import type { Grant } from './messages.js'

/** Pairing keys are 256 random bits. */
const KEY_BYTES = 32

export function newKey(): Buffer {
  return randomBytes(KEY_BYTES)
}

export function newNonce(): string {
  return randomBytes(18).toString('base64url')
}

/** The digest of a request: everything in it except `digest` and `macs`. */
export function requestDigest(request: Record<string, unknown>): string {
  return createHash('sha256').update(requestDigestInput(request), 'utf8').digest('hex')
}

export interface DecisionFields {
  readonly id: string
  readonly decision: 'approve' | 'deny'
  readonly grant: Grant
  readonly digest: string
  readonly phone: string
  readonly at: number
  readonly nonce: string
}

export const decisionMacInput: (d: DecisionFields) => string = decisionMacText

export function hmacHex(key: Uint8Array, input: string): string {
  return createHmac('sha256', key).update(input, 'utf8').digest('hex')
}

/** Constant-time comparison of two hex MACs; false for anything of the wrong shape or length. */
export function macEquals(expectedHex: string, givenHex: string): boolean {
  const a = Buffer.from(expectedHex, 'hex')
  const b = Buffer.from(givenHex, 'hex')
  if (a.length !== 32 || b.length !== 32 || givenHex.length !== 64) return false
  return timingSafeEqual(a, b)
}

export function signRequest(key: Uint8Array, digest: string): string {
  return hmacHex(key, requestMacText(digest))
}

export function verifyRequestMac(key: Uint8Array, digest: string, mac: string): boolean {
  return macEquals(signRequest(key, digest), mac)
}

export function signDecision(key: Uint8Array, decision: DecisionFields): string {
  return hmacHex(key, decisionMacInput(decision))
}

export function verifyDecisionMac(key: Uint8Array, decision: DecisionFields, mac: string): boolean {
  return macEquals(signDecision(key, decision), mac)
}

export interface OutcomeFields {
  readonly id: string
  readonly state: string
  readonly by?: string | undefined
  readonly grant?: Grant | undefined
  readonly at: number
  /** The digest of the request this outcome ends: an outcome binds to exactly that request. */
  readonly digest: string
}

export const outcomeMacInput: (o: OutcomeFields) => string = outcomeMacText

export function signOutcome(key: Uint8Array, outcome: OutcomeFields): string {
  return hmacHex(key, outcomeMacInput(outcome))
}

export function verifyOutcomeMac(key: Uint8Array, outcome: OutcomeFields, mac: string): boolean {
  return macEquals(signOutcome(key, outcome), mac)
}
