// No Node import here (dependency-cruiser: phone-side-browser-safe): the phone app, its service
// worker and the terminal phone (src/phone/) all run this one file.
import {
  conversationReplyMacText,
  conversationRequestMacText,
  decisionMacText,
  type GrantForm,
  outcomeMacText,
  ownerChallengeText,
  requestDigestInput,
  requestMacText,
} from './forms.js'
import { MAX_PAYLOAD_BYTES, PROTOCOL_VERSION, SAID_MAX_CHARS } from './limits.js'
import { hmacHex, macEquals, newNonce, sha256Bytes, sha256Hex } from './phone-crypto.js'
import { isId } from './topics.js'

/**
 * The phone side of protocol v1: what a phone believes and what it signs, exactly as
 * docs/protocol.md says. A request is shown only if its digest is recomputed over what arrived,
 * this phone's MAC verifies, the device is the paired one and it has not expired; an outcome only
 * if its MAC binds it to the digest of the request this phone showed; a reply only if it is signed
 * for this phone by this device.
 */

/** A request as a phone shows it, after every check passed. */
export interface VerifiedRequest {
  readonly v: 1
  readonly id: string
  readonly device: string
  readonly tool: string
  readonly action: string
  readonly args: unknown
  readonly critical: boolean
  readonly channel: 'voice' | 'text'
  readonly conversation?: string
  readonly askedBy?: string
  /** The words that led to the request: said in the room (voice) or typed on `askedBy` (text). */
  readonly said?: string
  /**
   * What the action touches, by id (Home Assistant entity ids, e.g. `lock.front_door`): on a yes
   * the device acts on exactly these and nothing else.
   */
  readonly targets?: readonly string[]
  readonly createdAt: number
  readonly expiresAt: number
  /** Recomputed by this phone; what a decision and an outcome are signed over. */
  readonly digest: string
  /** One MAC per paired phone, as received; only this phone's was checked. */
  readonly macs: Readonly<Record<string, string>>
}

export const OUTCOME_STATES = ['approved', 'denied', 'withdrawn', 'expired'] as const
export type OutcomeState = (typeof OUTCOME_STATES)[number]

/** An outcome as received (unknown fields too), once its MAC for this phone verified. */
export interface VerifiedOutcome {
  readonly v: 1
  readonly id: string
  readonly state: OutcomeState
  readonly by?: string
  readonly grant?: GrantForm
  readonly at: number
  /** One MAC per paired phone; only this phone's was checked. */
  readonly macs?: Readonly<Record<string, string>>
}

export interface VerifiedReply {
  readonly re: string
  readonly n: number
  readonly kind: string
  readonly body: unknown
  readonly at: number
}

/** Who this phone is to one paired device. */
export interface PhoneIdentity {
  readonly device: string
  readonly phone: string
  readonly key: Uint8Array
}

/** A verdict: the value believed, or the reason it was not (docs/protocol.md names them). */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string }

const HEX64 = /^[0-9a-f]{64}$/
const isTime = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
const isStr = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.length >= 1 && v.length <= max
const isIdText = (v: unknown): v is string => typeof v === 'string' && isId(v)
const optional = (v: unknown, ok: (v: unknown) => boolean) => v === undefined || ok(v)

/** Size first (before any parsing), then strict UTF-8, then JSON, then "an object". */
export function parseJsonObject(payload: Uint8Array): Checked<Record<string, unknown>> {
  if (payload.byteLength > MAX_PAYLOAD_BYTES) return { ok: false, reason: 'oversized' }
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload))
  } catch {
    return { ok: false, reason: 'malformed-json' }
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { ok: false, reason: 'invalid-payload' }
  }
  return { ok: true, value: json as Record<string, unknown> }
}

/** At most 500 ids of at most 255 characters: a sweep of a large home still fits in 16 KiB. */
function isTargets(t: unknown): boolean {
  return Array.isArray(t) && t.length <= 500 && t.every((id) => isStr(id, 255))
}

function isGrant(g: unknown): g is GrantForm {
  if (g === 'once' || g === 'session') return true
  return typeof g === 'object' && g !== null && isTime((g as { until?: unknown }).until)
}

/** The required fields of a request and their shapes (docs/protocol.md lists the same). */
function requestShapeOk(r: Record<string, unknown>): boolean {
  return (
    r.v === PROTOCOL_VERSION &&
    isIdText(r.id) &&
    isIdText(r.device) &&
    isStr(r.tool, 128) &&
    isStr(r.action, 1000) &&
    typeof r.critical === 'boolean' &&
    (r.channel === 'voice' || r.channel === 'text') &&
    optional(r.conversation, (c) => isStr(c, 128)) &&
    optional(r.askedBy, isIdText) &&
    optional(r.said, (s) => isStr(s, SAID_MAX_CHARS)) &&
    optional(r.targets, isTargets) &&
    isTime(r.createdAt) &&
    isTime(r.expiresAt) &&
    typeof r.digest === 'string' &&
    HEX64.test(r.digest) &&
    typeof r.macs === 'object' &&
    r.macs !== null &&
    !Array.isArray(r.macs)
  )
}

/**
 * A request on `…/approvals/<topicId>`, checked in docs/protocol.md's order. `now` is the phone's
 * clock (a caller that allows for the device's skew passes it moved back by the skew).
 */
export function verifyRequest(
  me: PhoneIdentity,
  topicId: string,
  payload: Uint8Array,
  now: number,
): Checked<VerifiedRequest> {
  const parsed = parseJsonObject(payload)
  if (!parsed.ok) return parsed
  const raw = parsed.value
  if (!requestShapeOk(raw)) return { ok: false, reason: 'invalid-payload' }
  const r = raw as unknown as VerifiedRequest
  if (r.id !== topicId) return { ok: false, reason: 'id-mismatch' }
  if (r.device !== me.device) return { ok: false, reason: 'wrong-device' }
  // Over everything received, unknown fields included: nothing can be added unnoticed.
  const digest = sha256Hex(requestDigestInput(raw))
  if (digest !== r.digest) return { ok: false, reason: 'digest-mismatch' }
  const mac = r.macs[me.phone]
  if (mac === undefined) return { ok: false, reason: 'not-signed-for-this-phone' }
  if (!macEquals(hmacHex(me.key, requestMacText(digest)), mac)) {
    return { ok: false, reason: 'bad-mac' }
  }
  if (r.expiresAt <= now) return { ok: false, reason: 'expired' }
  return { ok: true, value: r }
}

/**
 * An outcome counts only when its MAC for this phone binds it to `digest`, the digest of the
 * request this phone showed; without one there is nothing to check it against.
 */
export function verifyOutcome(
  me: PhoneIdentity,
  topicId: string,
  digest: string,
  payload: Uint8Array,
): Checked<VerifiedOutcome> {
  const parsed = parseJsonObject(payload)
  if (!parsed.ok) return parsed
  const o = parsed.value
  const shapeOk =
    o.v === PROTOCOL_VERSION &&
    isIdText(o.id) &&
    OUTCOME_STATES.includes(o.state as OutcomeState) &&
    optional(o.by, isIdText) &&
    optional(o.grant, isGrant) &&
    isTime(o.at) &&
    optional(o.macs, (m) => typeof m === 'object' && m !== null)
  if (!shapeOk) return { ok: false, reason: 'invalid-payload' }
  if (o.id !== topicId) return { ok: false, reason: 'id-mismatch' }
  const mac = (o.macs as Record<string, unknown> | undefined)?.[me.phone]
  if (mac === undefined) return { ok: false, reason: 'not-signed-for-this-phone' }
  const outcome = o as unknown as VerifiedOutcome
  if (!macEquals(hmacHex(me.key, outcomeMacText({ ...outcome, digest })), mac)) {
    return { ok: false, reason: 'bad-mac' }
  }
  return { ok: true, value: outcome }
}

/** The code of the signed error the deciding phone gets when the device refuses its owner's yes. */
export const OWNER_REFUSED_CODE = 'NOC_ERR_OWNER_REFUSED'

/** A conversation reply is believed only if it is for this phone, from the paired device, signed. */
export function verifyReply(me: PhoneIdentity, payload: Uint8Array): Checked<VerifiedReply> {
  const parsed = parseJsonObject(payload)
  if (!parsed.ok) return parsed
  const r = parsed.value
  const shapeOk =
    r.v === PROTOCOL_VERSION &&
    isIdText(r.re) &&
    isIdText(r.device) &&
    isIdText(r.phone) &&
    typeof r.n === 'number' &&
    Number.isSafeInteger(r.n) &&
    r.n >= 0 &&
    typeof r.kind === 'string' &&
    isTime(r.at) &&
    typeof r.mac === 'string' &&
    HEX64.test(r.mac)
  if (!shapeOk) return { ok: false, reason: 'invalid-payload' }
  if (r.device !== me.device) return { ok: false, reason: 'wrong-device' }
  if (r.phone !== me.phone) return { ok: false, reason: 'wrong-phone' }
  if (!macEquals(hmacHex(me.key, conversationReplyMacText(r)), r.mac)) {
    return { ok: false, reason: 'bad-mac' }
  }
  return { ok: true, value: r as unknown as VerifiedReply }
}

/**
 * This phone's signed answer to a verified request. A deny is always sent with "once"; a grant
 * beyond "once" for a critical tool is the caller's mistake to refuse (the device would remember
 * nothing, so no phone offers it).
 */
export function decisionMessage(
  me: PhoneIdentity,
  request: Pick<VerifiedRequest, 'id' | 'digest'>,
  decision: 'approve' | 'deny',
  grant: GrantForm,
  at: number,
  nonce: string = newNonce(),
  owner?: unknown,
): Record<string, unknown> {
  const g: GrantForm = decision === 'deny' ? 'once' : grant
  const fields = {
    id: request.id,
    decision,
    grant: g,
    digest: request.digest,
    phone: me.phone,
    at,
    nonce,
  }
  const mac = hmacHex(me.key, decisionMacText(fields))
  const { digest: _d, ...sent } = fields
  // The owner's assertion rides beside the MAC, not under it: its challenge binds it to the digest.
  return { v: PROTOCOL_VERSION, ...sent, mac, ...(owner !== undefined && { owner }) }
}

/**
 * The WebAuthn challenge a critical yes for the request with `digest` must sign: the 32 bytes of
 * SHA-256 over `ownerChallengeText(digest)` (docs/protocol.md, "The owner's yes").
 */
export function ownerChallenge(digest: string): Uint8Array {
  return sha256Bytes(ownerChallengeText(digest))
}

/** A signed request on `…/conversations/request/<phone>` (conversations, grants, history). */
export function phoneRequestMessage(
  me: PhoneIdentity,
  id: string,
  op: string,
  args: Record<string, unknown>,
  at: number,
  nonce: string = newNonce(),
): Record<string, unknown> {
  const fields = { id, device: me.device, phone: me.phone, op, at, nonce, args }
  return {
    v: PROTOCOL_VERSION,
    ...fields,
    mac: hmacHex(me.key, conversationRequestMacText(fields)),
  }
}

/** What a speaker says of a phone's owner credential (`owner_status`, docs/protocol.md). */
export interface OwnerStatus {
  /** Whether this phone has a credential registered under its current pairing. */
  readonly registered: boolean
  /** Its id (base64url), for the browser's `allowCredentials`. */
  readonly credentialId?: string
  /** Whether every critical yes needs a credential, even from a phone without one. */
  readonly required: boolean
  /** Where the app must run for the device to take its credential. */
  readonly rpId: string
  readonly origin: string
  /** A fresh registration challenge (base64url), good for one registration by this phone. */
  readonly challenge: string
  /** Until when (ms since the epoch). */
  readonly challengeExpiresAt: number
}
