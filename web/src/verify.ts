import {
  conversationReplyMacText,
  type GrantForm,
  outcomeMacText,
  requestDigestInput,
  requestMacText,
} from '../../src/protocol/forms.js'
import { isId } from '../../src/protocol/topics.js'
import { hmacHex, macEquals, sha256Hex } from './crypto.js'

/**
 * What the app believes, checked exactly as docs/protocol.md says: a request is shown only if its
 * digest is recomputed, this phone's MAC verifies, the device is the paired one and it has not
 * expired; an outcome only if its MAC binds it to the digest of the request we showed.
 */
export const MAX_PAYLOAD_BYTES = 16 * 1024

export interface ApprovalRequest {
  readonly id: string
  readonly device: string
  readonly tool: string
  readonly action: string
  readonly args: unknown
  readonly critical: boolean
  readonly channel: 'voice' | 'text'
  readonly conversation: string
  readonly askedBy?: string
  readonly createdAt: number
  readonly expiresAt: number
  readonly digest: string
}

export interface Outcome {
  readonly id: string
  readonly state: 'approved' | 'denied' | 'withdrawn' | 'expired'
  readonly by?: string
  readonly grant?: GrantForm
  readonly at: number
}

export interface PhoneIdentity {
  readonly device: string
  readonly phone: string
  readonly key: Uint8Array
}

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string }

const HEX64 = /^[0-9a-f]{64}$/
const isTime = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

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

function isGrant(g: unknown): g is GrantForm {
  if (g === 'once' || g === 'session') return true
  return typeof g === 'object' && g !== null && isTime((g as { until?: unknown }).until)
}

function requestShapeOk(r: Record<string, unknown>): boolean {
  const str = (v: unknown, max: number) => typeof v === 'string' && v.length >= 1 && v.length <= max
  return (
    r.v === 1 &&
    typeof r.id === 'string' &&
    isId(r.id) &&
    typeof r.device === 'string' &&
    isId(r.device) &&
    str(r.tool, 128) &&
    str(r.action, 1000) &&
    typeof r.critical === 'boolean' &&
    (r.channel === 'voice' || r.channel === 'text') &&
    str(r.conversation, 128) &&
    (r.askedBy === undefined || (typeof r.askedBy === 'string' && isId(r.askedBy))) &&
    isTime(r.createdAt) &&
    isTime(r.expiresAt) &&
    typeof r.digest === 'string' &&
    HEX64.test(r.digest) &&
    typeof r.macs === 'object' &&
    r.macs !== null
  )
}

export function verifyRequest(
  me: PhoneIdentity,
  topicId: string,
  payload: Uint8Array,
  now: number,
): Checked<ApprovalRequest> {
  const parsed = parseJsonObject(payload)
  if (!parsed.ok) return parsed
  const raw = parsed.value
  if (!requestShapeOk(raw)) return { ok: false, reason: 'invalid-payload' }
  const r = raw as unknown as ApprovalRequest & { macs: Record<string, unknown> }
  if (r.id !== topicId) return { ok: false, reason: 'id-mismatch' }
  if (r.device !== me.device) return { ok: false, reason: 'wrong-device' }
  const digest = sha256Hex(requestDigestInput(raw))
  if (digest !== r.digest) return { ok: false, reason: 'digest-mismatch' }
  const mac = r.macs[me.phone]
  if (mac === undefined) return { ok: false, reason: 'not-signed-for-this-phone' }
  if (!macEquals(hmacHex(me.key, requestMacText(digest)), mac)) {
    return { ok: false, reason: 'bad-mac' }
  }
  if (r.expiresAt <= now) return { ok: false, reason: 'expired' }
  const { macs: _m, ...request } = r
  return { ok: true, value: request }
}

const STATES = ['approved', 'denied', 'withdrawn', 'expired'] as const

/** An outcome counts only when its MAC for this phone binds it to the request we verified. */
export function verifyOutcome(
  me: PhoneIdentity,
  request: ApprovalRequest,
  payload: Uint8Array,
): Checked<Outcome> {
  const parsed = parseJsonObject(payload)
  if (!parsed.ok) return parsed
  const o = parsed.value
  const shapeOk =
    o.v === 1 &&
    o.id === request.id &&
    STATES.includes(o.state as Outcome['state']) &&
    (o.by === undefined || (typeof o.by === 'string' && isId(o.by))) &&
    (o.grant === undefined || isGrant(o.grant)) &&
    isTime(o.at)
  if (!shapeOk) return { ok: false, reason: 'invalid-outcome' }
  const macs = o.macs
  if (typeof macs !== 'object' || macs === null) return { ok: false, reason: 'unsigned-outcome' }
  const mac = (macs as Record<string, unknown>)[me.phone]
  if (mac === undefined) return { ok: false, reason: 'unsigned-outcome' }
  const outcome = o as unknown as Outcome
  const text = outcomeMacText({ ...outcome, digest: request.digest })
  if (!macEquals(hmacHex(me.key, text), mac)) return { ok: false, reason: 'bad-outcome-mac' }
  return { ok: true, value: outcome }
}

export interface Reply {
  readonly re: string
  readonly n: number
  readonly kind: string
  readonly body: unknown
  readonly at: number
}

/** A conversation reply is believed only if it is for us, from the paired device, and signed. */
export function verifyReply(me: PhoneIdentity, payload: Uint8Array): Checked<Reply> {
  const parsed = parseJsonObject(payload)
  if (!parsed.ok) return parsed
  const r = parsed.value
  const shapeOk =
    r.v === 1 &&
    typeof r.re === 'string' &&
    isId(r.re) &&
    typeof r.n === 'number' &&
    Number.isSafeInteger(r.n) &&
    r.n >= 0 &&
    typeof r.kind === 'string' &&
    isTime(r.at) &&
    typeof r.mac === 'string'
  if (!shapeOk) return { ok: false, reason: 'invalid-reply' }
  if (r.device !== me.device || r.phone !== me.phone) return { ok: false, reason: 'not-for-us' }
  if (!macEquals(hmacHex(me.key, conversationReplyMacText(r)), r.mac)) {
    return { ok: false, reason: 'bad-reply-mac' }
  }
  return { ok: true, value: r as unknown as Reply }
}
