import type { Conversation, NewMessage, StoredMessage } from '../core/conversation.js'
import type { Channel } from '../core/types.js'

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
  /** The newest message of a conversation, for summaries. */
  lastMessage(conversationId: string): StoredMessage | undefined
  /**
   * The paired phones that typed in a conversation, each once, in the order each first typed; at
   * most `limit`. Messages kept without who typed them (spoken, or stored before `by`) add none.
   */
  typedBy(conversationId: string, limit: number): string[]
  /**
   * Conversations, newest activity first, those with the same activity by id. `before` alone:
   * activity strictly before it. With `beforeId` (the last conversation of the previous page,
   * `before` its `updatedAt`): the conversations after that one in this order, so a page boundary
   * among conversations sharing one time skips none of them.
   */
  listConversations(page?: ConversationPage): Conversation[]
  /** Removes a conversation and every message of it, for real. Returns false if there was none. */
  deleteConversation(id: string): boolean
  /**
   * Retention: removes conversations whose last activity is before `before`, and all but the
   * `keep` most recent. Returns how many were removed.
   */
  prune(policy: { before?: number | undefined; keep?: number | undefined }): number
  /**
   * Records what a session cost in the model's tokens, so a household can see what its talking
   * costs. Throws if the conversation is unknown. Deleting the conversation keeps its cost in the
   * totals (it was billed); retention's `before` removes old records.
   */
  recordUsage(conversationId: string, tokens: number, at: number): void
  /** Tokens recorded for one conversation, or for every one since `since` (inclusive). */
  usage(of: { conversationId?: string; since?: number }): number
  /** Gives the space of removed rows back to the file system. */
  vacuum(): void
  close(): void
}

/** A page of the conversation list: see `TranscriptStore.listConversations`. */
export interface ConversationPage {
  readonly limit?: number | undefined
  readonly before?: number | undefined
  readonly beforeId?: string | undefined
}
