import type { WireEnding } from '../../ports/approval-wire.js'
import type { ApprovalRequest } from '../../ports/approver.js'
import {
  type OutcomeMessage,
  type PhoneKeys,
  PROTOCOL_VERSION,
  type RequestBody,
  requestDigest,
  saidForRequest,
  signOutcome,
  signRequest,
} from '../../protocol/index.js'

/**
 * The approval request as published (docs/protocol.md, "The request"): the body, its digest, and
 * one MAC over the digest for every phone paired now.
 */
export function requestMessage(
  deviceId: string,
  request: ApprovalRequest,
  phones: ReturnType<PhoneKeys>,
): { message: string; digest: string } {
  const said = saidForRequest(request.said)
  const body: RequestBody = {
    v: PROTOCOL_VERSION,
    id: request.id,
    device: deviceId,
    tool: request.tool,
    action: request.action,
    args: request.args,
    critical: request.critical,
    channel: request.channel,
    // Asked outside any conversation (a timer, an automation): the field is left out.
    ...(request.conversationId !== '' && { conversation: request.conversationId }),
    ...(request.askedBy !== undefined && { askedBy: request.askedBy }),
    // The words that led to the call, cut short; in the digest, so no one can change them.
    ...(said !== undefined && { said }),
    // What a yes acts on, by id: signed with the rest.
    ...(request.targets !== undefined && { targets: request.targets }),
    createdAt: request.createdAt,
    expiresAt: request.expiresAt,
  }
  const digest = requestDigest(body)
  const macs: Record<string, string> = {}
  for (const [phone, key] of phones) macs[phone] = signRequest(key, digest)
  return { message: JSON.stringify({ ...body, digest, macs }), digest }
}

/** An outcome signed for every phone paired now, over the digest of the request it ends. */
export function outcomeMessage(
  ending: Pick<WireEnding, 'state' | 'by' | 'grant' | 'at'> & { id: string; digest: string },
  phones: ReturnType<PhoneKeys>,
): OutcomeMessage {
  const { id, state, by, grant, at, digest } = ending
  const macs: Record<string, string> = {}
  for (const [phone, key] of phones) {
    macs[phone] = signOutcome(key, { id, state, by, grant, at, digest })
  }
  return {
    v: PROTOCOL_VERSION,
    id,
    state,
    ...(by !== undefined && { by }),
    ...(grant !== undefined && { grant }),
    at,
    macs,
  }
}

/**
 * The digest of a leftover request, computed as a phone would from what it received; for a payload
 * that is no JSON object at all (no phone could have shown it) the digest of the empty object.
 */
export function leftoverDigest(payload: Buffer): string {
  try {
    const raw: unknown = JSON.parse(payload.toString('utf8'))
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      return requestDigest(raw as Record<string, unknown>)
    }
  } catch {
    // not JSON: falls through
  }
  return requestDigest({})
}
