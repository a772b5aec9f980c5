import { z } from 'zod'
import {
  CONVERSATION_OPS,
  type ConversationOp,
  conversationRequestMacInput,
  conversationRequestSchema,
  signConversationRequest,
} from './conversations.js'
import { macEquals } from './crypto.js'
import { DEVICE_OPS } from './device-ops.js'
import { OWNER_OPS } from './owner-ops.js'
import { PUSH_OPS } from './push-ops.js'
import { ID_PATTERN } from './topics.js'
import { WAKE_OPS } from './wake-ops.js'

/**
 * Grants over MQTT (protocol v1, docs/protocol.md "Grants"): two more operations on the
 * conversation request topic, signed and answered exactly like the conversation operations, so a
 * phone can see every remembered yes and take one back.
 */
const GRANT_OPS = ['grants', 'revoke', 'history'] as const

/** Every operation a phone may send on `…/conversations/request/<phone>`. */
const PHONE_OPS = [
  ...CONVERSATION_OPS,
  ...GRANT_OPS,
  ...PUSH_OPS,
  ...DEVICE_OPS,
  ...OWNER_OPS,
  ...WAKE_OPS,
] as const
export type PhoneOp = (typeof PHONE_OPS)[number]

/** The conversation request with the grant operations allowed too. */
export const phoneRequestSchema = conversationRequestSchema.extend({ op: z.enum(PHONE_OPS) })
export type PhoneRequest = z.infer<typeof phoneRequestSchema>
export type PhoneRequestFields = Omit<PhoneRequest, 'v' | 'mac'>

export const grantOpArgSchemas = {
  grants: z.object({}),
  revoke: z.object({ grant: z.string().regex(ID_PATTERN) }),
  /** Newest ending first; `before` and `beforeId` come from the previous page's `next`. */
  history: z.object({
    limit: z.number().optional(),
    before: z.number().optional(),
    beforeId: z.string().max(128).optional(),
  }),
} as const

/** The same signed form as a conversation request: the op is one of its lines, as text. */
export function phoneRequestMacInput(r: PhoneRequestFields): string {
  return conversationRequestMacInput({ ...r, op: r.op as ConversationOp })
}

export function signPhoneRequest(key: Uint8Array, r: PhoneRequestFields): string {
  return signConversationRequest(key, { ...r, op: r.op as ConversationOp })
}

export function verifyPhoneRequest(key: Uint8Array, r: PhoneRequestFields, mac: string): boolean {
  return macEquals(signPhoneRequest(key, r), mac)
}

/**
 * One remembered yes, as a phone sees it. `scope` says what it covers (exactly `args`, or every
 * call matching `pattern`); `expiry` how long (`conversation`, or `until` a time). Nothing secret:
 * no key, no digest, no broker detail.
 */
export const grantSummarySchema = z.object({
  id: z.string().regex(ID_PATTERN),
  tool: z.string(),
  channel: z.enum(['voice', 'text']),
  scope: z.enum(['exact', 'pattern']),
  /** `scope: exact`: the arguments approved (absent for grants remembered before they were kept). */
  args: z.unknown().optional(),
  /** `scope: pattern`: the argument values every covered call has. */
  pattern: z.record(z.string(), z.unknown()).optional(),
  expiry: z.enum(['conversation', 'until']),
  /** `expiry: conversation`: the conversation it holds in. */
  conversation: z.string().optional(),
  /** `expiry: until`: ms since the epoch. */
  until: z.number().optional(),
  createdAt: z.number(),
  /** The phone id that said yes (or `console`). */
  by: z.string(),
})
export type GrantSummary = z.infer<typeof grantSummarySchema>
