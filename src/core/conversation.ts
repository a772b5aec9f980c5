import type { Channel } from './types.js'

/** A conversation: a spoken or typed session, kept as an ordinary chat. */
export interface Conversation {
  readonly id: string
  /** The channel it started on; a spoken conversation may be continued by typing. */
  readonly channel: Channel
  readonly title: string | null
  readonly createdAt: number
  readonly updatedAt: number
}

export interface ToolCallRecord {
  readonly id: string
  readonly name: string
  readonly args: unknown
}

/** What a tool call came to, as the model and the phone see it. */
export type ToolOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string; readonly code: string }

export type Message =
  | {
      readonly role: 'user'
      readonly text: string
      readonly channel: Channel
      readonly at: number
      /** Typed: the paired phone that typed it (absent for speech and for rows kept before it). */
      readonly by?: string
    }
  | {
      readonly role: 'assistant'
      readonly text: string
      readonly toolCalls: readonly ToolCallRecord[]
      readonly channel: Channel
      readonly at: number
    }
  | {
      readonly role: 'tool'
      readonly toolCallId: string
      readonly toolName: string
      readonly args: unknown
      readonly outcome: ToolOutcome
      readonly channel: Channel
      readonly at: number
    }

export type NewMessage = Message

export type StoredMessage = Message & { readonly seq: number; readonly conversationId: string }
