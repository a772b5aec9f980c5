import { z } from 'zod'
import { hmacHex, macEquals } from './crypto.js'
import { conversationReplyMacText, conversationRequestMacText } from './forms.js'
import { PROTOCOL_VERSION } from './limits.js'
import { ID_PATTERN } from './topics.js'

/**
 * Conversations over MQTT (protocol v1, docs/protocol.md "Conversations"): a paired phone sends
 * signed requests on `…/conversations/request/<phone>`; the device answers on
 * `…/conversations/reply/<phone>`, never retained, each answer signed with that phone's key.
 */
export const CONVERSATION_OPS = ['list', 'show', 'say', 'delete', 'follow', 'unfollow'] as const
export type ConversationOp = (typeof CONVERSATION_OPS)[number]

const id = z.string().regex(ID_PATTERN)
const hex64 = z.string().regex(/^[0-9a-f]{64}$/)
const time = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)
const nonce = z.string().regex(/^[A-Za-z0-9_-]{16,64}$/)

export const conversationRequestSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  id,
  device: id,
  phone: id,
  op: z.enum(CONVERSATION_OPS),
  /** The operation's arguments; checked against the op's own schema only after the MAC verified. */
  args: z.record(z.string(), z.unknown()),
  at: time,
  nonce,
  mac: hex64,
})
type ConversationRequest = z.infer<typeof conversationRequestSchema>
export type ConversationRequestFields = Omit<ConversationRequest, 'v' | 'mac'>

/** Conversation ids are looked up, never interpolated; the cap keeps junk out of the logs. */
const conversationRef = z.string().min(1).max(128)

/** Page sizes are plain numbers here: the service refuses what is out of range, and says so. */
export const opArgSchemas = {
  list: z.object({
    limit: z.number().optional(),
    before: z.number().optional(),
    beforeId: conversationRef.optional(),
  }),
  show: z.object({
    conversation: conversationRef,
    afterSeq: z.number().optional(),
    limit: z.number().optional(),
  }),
  say: z.object({ conversation: conversationRef, text: z.string().max(8000) }),
  delete: z.object({ conversation: conversationRef }),
  /** `*` follows every conversation; `forMs` bounds how long (the phone renews). */
  follow: z.object({ conversation: conversationRef.default('*'), forMs: z.number().optional() }),
  unfollow: z.object({}),
} as const

const REPLY_KINDS = [
  /** A streamed piece of the model's answer to `say`. */
  'part',
  /** A slice of a list or show answer (answers are split to stay under 16 KiB). */
  'items',
  /** `say` started waiting for a human's approval. */
  'pending',
  /** Live view: a message that was just stored. */
  'message',
  /** Live view: an approval asked for, or how it ended. */
  'approval',
  /** The request's final answer. */
  'done',
  /** The request was refused; `body` is `{code, message}`. */
  'error',
] as const
export type ReplyKind = (typeof REPLY_KINDS)[number]

export const conversationReplySchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  /** The id of the request this answers. */
  re: id,
  device: id,
  phone: id,
  /** 0, 1, 2, … for the answers to one request, so the phone puts them in order and sees gaps. */
  n: z.number().int().nonnegative(),
  kind: z.enum(REPLY_KINDS),
  body: z.unknown(),
  at: time,
  mac: hex64,
})

// The signed texts come from forms.ts, which the phone app bundles too: one source for both sides.
export const conversationRequestMacInput: (r: ConversationRequestFields) => string =
  conversationRequestMacText

export function signConversationRequest(key: Uint8Array, r: ConversationRequestFields): string {
  return hmacHex(key, conversationRequestMacInput(r))
}

export function verifyConversationRequest(
  key: Uint8Array,
  r: ConversationRequestFields,
  mac: string,
): boolean {
  return macEquals(signConversationRequest(key, r), mac)
}

/** The reply MAC covers the canonical JSON of the whole reply except `mac`, unknown fields included. */
export const conversationReplyMacInput = conversationReplyMacText

export function signConversationReply(key: Uint8Array, reply: Record<string, unknown>): string {
  return hmacHex(key, conversationReplyMacInput(reply))
}

export function verifyConversationReply(
  key: Uint8Array,
  reply: Record<string, unknown>,
  mac: string,
): boolean {
  return macEquals(signConversationReply(key, reply), mac)
}
