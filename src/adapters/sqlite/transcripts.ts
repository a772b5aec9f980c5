import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type {
  Conversation,
  NewMessage,
  StoredMessage,
  ToolCallRecord,
  ToolOutcome,
} from '../../core/conversation.js'
import { NocturnError } from '../../core/errors.js'
import type { Channel } from '../../core/types.js'
import type { ConversationPage } from '../../ports/transcript-store.js'

interface ConversationRow {
  id: string
  channel: Channel
  title: string | null
  created_at: number
  updated_at: number
}

interface MessageRow {
  conversation_id: string
  seq: number
  role: 'user' | 'assistant' | 'tool'
  channel: Channel
  text: string
  tool_calls: string | null
  tool_call_id: string | null
  tool_name: string | null
  tool_args: string | null
  outcome: string | null
  created_at: number
  typed_by: string | null
}

/**
 * Conversations, their append-only messages and what each spoken session cost, on the store's own
 * database (migrations 1, 5 and 9). How durable each write is, is the store's to say.
 */
export class SqliteTranscripts {
  readonly #q
  readonly #append: (conversationId: string, m: NewMessage) => StoredMessage

  constructor(db: Database.Database) {
    const q = prepare(db)
    this.#q = q
    // One transaction: the message and the conversation's activity time land together or not at all.
    this.#append = db.transaction((conversationId: string, m: NewMessage): StoredMessage => {
      if (!q.getConv.get(conversationId)) {
        throw new NocturnError(
          'NOC_ERR_STORE_UNKNOWN_CONVERSATION',
          `no conversation with id ${conversationId}`,
        )
      }
      const { seq } = q.nextSeq.get(conversationId) as { seq: number }
      q.insertMsg.run(
        conversationId,
        seq,
        m.role,
        m.channel,
        m.role === 'tool' ? '' : m.text,
        m.role === 'assistant' ? JSON.stringify(m.toolCalls) : null,
        m.role === 'tool' ? m.toolCallId : null,
        m.role === 'tool' ? m.toolName : null,
        m.role === 'tool' ? JSON.stringify(m.args ?? null) : null,
        m.role === 'tool' ? JSON.stringify(m.outcome) : null,
        m.at,
        m.role === 'user' ? (m.by ?? null) : null,
      )
      q.touchConv.run(m.at, conversationId)
      return { ...m, seq, conversationId }
    })
  }

  createConversation(input: { channel: Channel; title?: string; at: number }): Conversation {
    const id = randomUUID()
    this.#q.insertConv.run(id, input.channel, input.title ?? null, input.at, input.at)
    return {
      id,
      channel: input.channel,
      title: input.title ?? null,
      createdAt: input.at,
      updatedAt: input.at,
    }
  }

  getConversation(id: string): Conversation | undefined {
    const row = this.#q.getConv.get(id) as ConversationRow | undefined
    return row ? toConversation(row) : undefined
  }

  append(conversationId: string, message: NewMessage): StoredMessage {
    return this.#append(conversationId, message)
  }

  messages(conversationId: string, page: { afterSeq?: number; limit?: number }): StoredMessage[] {
    const rows = this.#q.messages.all(
      conversationId,
      page.afterSeq ?? 0,
      page.limit ?? -1,
    ) as MessageRow[]
    return rows.map(toMessage)
  }

  lastMessage(conversationId: string): StoredMessage | undefined {
    const row = this.#q.lastMsg.get(conversationId) as MessageRow | undefined
    return row ? toMessage(row) : undefined
  }

  /** Read from the conversation's own rows (its primary key's range): no index, no migration. */
  typedBy(conversationId: string, limit: number): string[] {
    const rows = this.#q.typedBy.all(conversationId, limit) as { typed_by: string }[]
    return rows.map((r) => r.typed_by)
  }

  listConversations(page: ConversationPage): Conversation[] {
    const limit = page.limit ?? 50
    const rows = (
      page.before !== undefined && page.beforeId !== undefined
        ? this.#q.listConvAfter.all(page.before, page.before, page.beforeId, limit)
        : this.#q.listConv.all(page.before ?? Number.MAX_SAFE_INTEGER, limit)
    ) as ConversationRow[]
    return rows.map(toConversation)
  }

  deleteConversation(id: string): boolean {
    // Messages go with it (ON DELETE CASCADE), in the same statement's transaction.
    return this.#q.deleteConv.run(id).changes > 0
  }

  /** Usage is recorded only beside a conversation that exists (checked before the write). */
  requireConversation(conversationId: string): void {
    if (!this.#q.getConv.get(conversationId)) {
      throw new NocturnError(
        'NOC_ERR_STORE_UNKNOWN_CONVERSATION',
        `no conversation ${conversationId} to record token usage for`,
      )
    }
  }

  recordUsage(conversationId: string, tokens: number, at: number): void {
    this.#q.addUsage.run(conversationId, at, tokens)
  }

  usage(of: { conversationId?: string; since?: number }): number {
    const row = (
      of.conversationId !== undefined
        ? this.#q.usageOf.get(of.conversationId, of.since ?? 0)
        : this.#q.usageSince.get(of.since ?? 0)
    ) as { tokens: number | null }
    return row.tokens ?? 0
  }

  /** Conversations last active before `before`; how many went. */
  pruneBefore(before: number): number {
    return this.#q.pruneBefore.run(before).changes
  }

  /** Usage recorded before `before` (a deleted conversation leaves its cost until then). */
  pruneUsage(before: number): void {
    this.#q.pruneUsage.run(before)
  }

  /** All but the `keep` most recently active conversations; how many went. */
  pruneKeep(keep: number): number {
    return this.#q.pruneKeep.run(keep).changes
  }
}

function prepare(db: Database.Database) {
  return {
    insertConv: db.prepare(
      'INSERT INTO conversations (id, channel, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    ),
    getConv: db.prepare('SELECT * FROM conversations WHERE id = ?'),
    addUsage: db.prepare('INSERT INTO usage (conversation_id, at, tokens) VALUES (?, ?, ?)'),
    usageOf: db.prepare(
      'SELECT sum(tokens) AS tokens FROM usage WHERE conversation_id = ? AND at >= ?',
    ),
    usageSince: db.prepare('SELECT sum(tokens) AS tokens FROM usage WHERE at >= ?'),
    pruneUsage: db.prepare('DELETE FROM usage WHERE at < ?'),
    touchConv: db.prepare('UPDATE conversations SET updated_at = max(updated_at, ?) WHERE id = ?'),
    nextSeq: db.prepare(
      'SELECT coalesce(max(seq), 0) + 1 AS seq FROM messages WHERE conversation_id = ?',
    ),
    insertMsg: db.prepare(
      `INSERT INTO messages (conversation_id, seq, role, channel, text, tool_calls, tool_call_id,
         tool_name, tool_args, outcome, created_at, typed_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    messages: db.prepare(
      'SELECT * FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    lastMsg: db.prepare(
      'SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1',
    ),
    typedBy: db.prepare(
      `SELECT typed_by FROM messages WHERE conversation_id = ? AND typed_by IS NOT NULL
         GROUP BY typed_by ORDER BY min(seq) LIMIT ?`,
    ),
    listConv: db.prepare(
      'SELECT * FROM conversations WHERE updated_at < ? ORDER BY updated_at DESC, id LIMIT ?',
    ),
    // After (time, id) in the list's order: older, or as old with a later id.
    listConvAfter: db.prepare(
      `SELECT * FROM conversations WHERE updated_at < ? OR (updated_at = ? AND id > ?)
         ORDER BY updated_at DESC, id LIMIT ?`,
    ),
    deleteConv: db.prepare('DELETE FROM conversations WHERE id = ?'),
    pruneBefore: db.prepare('DELETE FROM conversations WHERE updated_at < ?'),
    pruneKeep: db.prepare(
      `DELETE FROM conversations WHERE id NOT IN
         (SELECT id FROM conversations ORDER BY updated_at DESC, id LIMIT ?)`,
    ),
  }
}

function toConversation(r: ConversationRow): Conversation {
  return {
    id: r.id,
    channel: r.channel,
    title: r.title,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  }
}

function toMessage(r: MessageRow): StoredMessage {
  const base = {
    seq: r.seq,
    conversationId: r.conversation_id,
    channel: r.channel,
    at: r.created_at,
  }
  if (r.role === 'user') {
    return { ...base, role: 'user', text: r.text, ...(r.typed_by !== null && { by: r.typed_by }) }
  }
  if (r.role === 'assistant') {
    const toolCalls = r.tool_calls ? (JSON.parse(r.tool_calls) as ToolCallRecord[]) : []
    return { ...base, role: 'assistant', text: r.text, toolCalls }
  }
  return {
    ...base,
    role: 'tool',
    toolCallId: r.tool_call_id ?? '',
    toolName: r.tool_name ?? '',
    args: r.tool_args ? JSON.parse(r.tool_args) : null,
    outcome: JSON.parse(r.outcome ?? 'null') as ToolOutcome,
  }
}
