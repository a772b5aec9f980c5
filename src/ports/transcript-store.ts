import type { Channel } from '../core/context.js'
import type { Conversation, Message, NewMessage, StoredMessage } from '../core/conversation.js'

/**
 * TranscriptStore: conversations and their messages, append-only and crash-safe — a message whose
 * append returned survives a killed process. Spoken and typed sessions are stored alike.
 */
export interface TranscriptStore {
  createConversation(input: { channel: Channel; title?: string; at: number }): Conversation
  /** Appends one message; returns it with its sequence number. Throws if the conversation is unknown. */
  append(conversationId: string, message: NewMessage): StoredMessage
  getConversation(id: string): Conversation | undefined
  /** Every message of a conversation in order, as the turn loop needs them to continue it. */
  messages(conversationId: string, page?: { afterSeq?: number; limit?: number }): StoredMessage[]
  /** Conversations, newest activity first. */
  listConversations(page?: { limit?: number; before?: number }): Conversation[]
  close(): void
}

export type { Message }
