/**
 * Protocol v1 topics. Everything lives under `<prefix>/<device>/`; ids that become topic levels are
 * restricted to a safe alphabet so nobody can smuggle `/`, `+` or `#` into a topic.
 */
export const DEFAULT_PREFIX = 'nocturn/v1'

/** Device ids, phone ids, approval ids and nonces: letters, digits, `.`, `_`, `-`; 1–64 long. */
export const ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/

export function isId(value: string): boolean {
  return ID_PATTERN.test(value)
}

/** A prefix is one or more topic levels without wildcards, empty levels or a leading `$`. */
export function isPrefix(value: string): boolean {
  return (
    value.length > 0 &&
    value.length <= 128 &&
    !value.startsWith('$') &&
    value
      .split('/')
      .every((level) => level !== '' && !/[+#]/.test(level) && !level.includes('\u0000'))
  )
}

/**
 * Where every speaker of the household announces a wake it heard (docs/protocol.md, "Several
 * speakers in one home"): one topic under the prefix, shared by all devices. No device topic is
 * exactly `<prefix>/<id>` (they all have a level below it), so a device named `wake` cannot
 * collide with it.
 */
export function wakeTopic(prefix: string): string {
  if (!isPrefix(prefix)) throw new Error(`not a usable topic prefix: ${JSON.stringify(prefix)}`)
  return `${prefix}/wake`
}

export interface Topics {
  readonly base: string
  readonly status: string
  request(id: string): string
  decision(id: string): string
  outcome(id: string): string
  /** Matches every request topic (retained requests). */
  readonly requests: string
  /** Matches every decision topic. */
  readonly decisions: string
  /** Matches every outcome topic. */
  readonly outcomes: string
  /** Where phone `phone` sends its conversation requests (only that phone may write it). */
  conversationRequest(phone: string): string
  /** Where the device answers phone `phone` (only that phone may read it); never retained. */
  conversationReply(phone: string): string
  /** Matches every phone's conversation request topic. */
  readonly conversationRequests: string
}

export function topicsFor(prefix: string, device: string): Topics {
  if (!isPrefix(prefix)) throw new Error(`not a usable topic prefix: ${JSON.stringify(prefix)}`)
  if (!isId(device)) throw new Error(`not a usable device id: ${JSON.stringify(device)}`)
  const base = `${prefix}/${device}`
  return {
    base,
    status: `${base}/status`,
    request: (id) => `${base}/approvals/${id}`,
    decision: (id) => `${base}/approvals/${id}/decision`,
    outcome: (id) => `${base}/approvals/${id}/outcome`,
    requests: `${base}/approvals/+`,
    decisions: `${base}/approvals/+/decision`,
    outcomes: `${base}/approvals/+/outcome`,
    conversationRequest: (phone) => `${base}/conversations/request/${phone}`,
    conversationReply: (phone) => `${base}/conversations/reply/${phone}`,
    conversationRequests: `${base}/conversations/request/+`,
  }
}

export type ApprovalTopicKind = 'request' | 'decision' | 'outcome'

/** Which approval topic of this device `topic` is, and for which id; undefined if none. */
export function parseApprovalTopic(
  topics: Topics,
  topic: string,
): { kind: ApprovalTopicKind; id: string } | undefined {
  const head = `${topics.base}/approvals/`
  if (!topic.startsWith(head)) return undefined
  const rest = topic.slice(head.length).split('/')
  const id = rest[0] ?? ''
  if (!isId(id)) return undefined
  if (rest.length === 1) return { kind: 'request', id }
  if (rest.length === 2 && (rest[1] === 'decision' || rest[1] === 'outcome')) {
    return { kind: rest[1], id }
  }
  return undefined
}

/** The phone id of a conversation request topic of this device; undefined if it is none. */
export function parseConversationRequestTopic(topics: Topics, topic: string): string | undefined {
  const head = `${topics.base}/conversations/request/`
  if (!topic.startsWith(head)) return undefined
  const phone = topic.slice(head.length)
  return isId(phone) ? phone : undefined
}
