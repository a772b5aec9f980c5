/**
 * The canonical forms of protocol v1 (docs/protocol.md "Canonical forms") with no Node import, so
 * the browser app bundles the very same text the device signs. Hashing is the caller's: the device
 * uses node:crypto, the app @noble/hashes (it must work where crypto.subtle does not exist).
 */
import { canonicalJson } from '../core/canonical-json.js'

const FORM_LABELS = {
  request: 'nocturn-request-v1',
  decision: 'nocturn-decision-v1',
  outcome: 'nocturn-outcome-v1',
  conversationRequest: 'nocturn-conversation-request-v1',
  conversationReply: 'nocturn-conversation-reply-v1',
  ownerYes: 'nocturn-critical-yes-v1',
} as const

/** What the request digest hashes: the request without `digest` and `macs`. */
export function requestDigestInput(request: Record<string, unknown>): string {
  const { digest: _d, macs: _m, ...body } = request
  return canonicalJson(body)
}

export function requestMacText(digest: string): string {
  return `${FORM_LABELS.request}\n${digest}`
}

/**
 * What the WebAuthn challenge of a critical yes hashes (docs/protocol.md, "The owner's yes"): the
 * challenge is SHA-256 of this text, so an assertion made for one request is worth nothing for
 * another.
 */
export function ownerChallengeText(digest: string): string {
  return `${FORM_LABELS.ownerYes}\n${digest}`
}

export type GrantForm = 'once' | 'session' | { readonly until: number }

function grantForm(grant: GrantForm): string {
  return typeof grant === 'string' ? grant : `until:${grant.until}`
}

export function decisionMacText(fields: {
  readonly id: string
  readonly decision: 'approve' | 'deny'
  readonly grant: GrantForm
  readonly digest: string
  readonly phone: string
  readonly at: number
  readonly nonce: string
}): string {
  return [
    FORM_LABELS.decision,
    fields.id,
    fields.decision,
    grantForm(fields.grant),
    fields.digest,
    fields.phone,
    String(fields.at),
    fields.nonce,
  ].join('\n')
}

/** The signed outcome: seven lines; `by` and `grant` are empty lines when absent. */
export function outcomeMacText(fields: {
  readonly id: string
  readonly state: string
  readonly by?: string | undefined
  readonly grant?: GrantForm | undefined
  readonly at: number
  readonly digest: string
}): string {
  return [
    FORM_LABELS.outcome,
    fields.id,
    fields.state,
    fields.by ?? '',
    fields.grant === undefined ? '' : grantForm(fields.grant),
    String(fields.at),
    fields.digest,
  ].join('\n')
}

export function conversationRequestMacText(r: {
  readonly id: string
  readonly device: string
  readonly phone: string
  readonly op: string
  readonly at: number
  readonly nonce: string
  readonly args: unknown
}): string {
  return [
    FORM_LABELS.conversationRequest,
    r.id,
    r.device,
    r.phone,
    r.op,
    String(r.at),
    r.nonce,
    canonicalJson(r.args),
  ].join('\n')
}

/** The whole reply without `mac`, unknown fields included. */
export function conversationReplyMacText(reply: Record<string, unknown>): string {
  const { mac: _m, ...rest } = reply
  return `${FORM_LABELS.conversationReply}\n${canonicalJson(rest)}`
}
