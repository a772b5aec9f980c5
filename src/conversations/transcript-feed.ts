import type { Conversation, NewMessage, StoredMessage } from '../core/conversation.js'
import { tellEach } from '../core/listeners.js'
import type { Logger } from '../core/logger.js'
import type { Channel } from '../core/types.js'
import type { ConversationPage, TranscriptStore } from '../ports/transcript-store.js'

export type FeedListener = (message: StoredMessage) => void

/** An approval asked for in a conversation, or how it ended, for the live view. */
export interface ApprovalEvent {
  readonly conversationId: string
  readonly approvalId: string
  readonly tool: string
  readonly action: string
  readonly critical: boolean
  readonly channel: Channel
  readonly state: 'pending' | 'approved' | 'denied' | 'ended'
  readonly by?: string
}
export type ApprovalListener = (event: ApprovalEvent) => void

/**
 * The store as a feed: a decorator that tells subscribers about every message right after it was
 * stored, so a phone can follow a spoken session live. Only stored messages are ever announced.
 */
export class TranscriptFeed implements TranscriptStore {
  readonly #inner: TranscriptStore
  readonly #listeners = new Set<FeedListener>()
  readonly #approvalListeners = new Set<ApprovalListener>()
  readonly #log: Logger

  constructor(inner: TranscriptStore, log: Logger) {
    this.#inner = inner
    this.#log = log
  }

  subscribe(listener: FeedListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** Approvals are not stored messages, but a person following a session should see them. */
  subscribeApprovals(listener: ApprovalListener): () => void {
    this.#approvalListeners.add(listener)
    return () => {
      this.#approvalListeners.delete(listener)
    }
  }

  announceApproval(event: ApprovalEvent): void {
    tellEach(this.#approvalListeners, (l) => l(event), this.#log, {
      event: 'approval_listener_failed',
    })
  }

  append(conversationId: string, message: NewMessage): StoredMessage {
    const stored = this.#inner.append(conversationId, message)
    // A failing follower must never fail the append that already happened.
    tellEach(this.#listeners, (l) => l(stored), this.#log, { event: 'feed_listener_failed' })
    return stored
  }

  createConversation(input: { channel: Channel; title?: string; at: number }): Conversation {
    return this.#inner.createConversation(input)
  }
  getConversation(id: string): Conversation | undefined {
    return this.#inner.getConversation(id)
  }
  messages(conversationId: string, page?: { afterSeq?: number; limit?: number }): StoredMessage[] {
    return this.#inner.messages(conversationId, page)
  }
  lastMessage(conversationId: string): StoredMessage | undefined {
    return this.#inner.lastMessage(conversationId)
  }
  typedBy(conversationId: string, limit: number): string[] {
    return this.#inner.typedBy(conversationId, limit)
  }
  listConversations(page?: ConversationPage): Conversation[] {
    return this.#inner.listConversations(page)
  }
  deleteConversation(id: string): boolean {
    return this.#inner.deleteConversation(id)
  }
  prune(policy: { before?: number; keep?: number }): number {
    return this.#inner.prune(policy)
  }
  recordUsage(conversationId: string, tokens: number, at: number): void {
    this.#inner.recordUsage(conversationId, tokens, at)
  }
  usage(of: { conversationId?: string; since?: number }): number {
    return this.#inner.usage(of)
  }
  vacuum(): void {
    this.#inner.vacuum()
  }
  close(): void {
    this.#inner.close()
  }
}
