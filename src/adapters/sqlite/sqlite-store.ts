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
import type { Grant, NewGrant } from '../../core/grants.js'
import type { Channel } from '../../core/types.js'
import type { GrantStore } from '../../ports/grant-store.js'
import type { NewTimer, StoredTimer, TimerOutcome, TimerStore } from '../../ports/timer-store.js'
import type { ConversationPage, TranscriptStore } from '../../ports/transcript-store.js'
import { openDatabase } from './open.js'
import { WriteHealth } from './write-health.js'

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
}

interface GrantRow {
  id: string
  tool: string
  channel: Channel
  scope: string
  expiry: string
  created_by: string
  created_at: number
  revoked_at: number | null
}

/** The transcript and grant store on SQLite (better-sqlite3): one file, WAL, append-only messages. */
export class SqliteStore implements TranscriptStore, GrantStore, TimerStore {
  readonly #db: Database.Database
  readonly #q
  readonly #writes: WriteHealth

  constructor(path: string) {
    this.#db = openDatabase(path)
    this.#writes = new WriteHealth(path)
    const db = this.#db
    this.#q = {
      insertConv: db.prepare(
        'INSERT INTO conversations (id, channel, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      ),
      getConv: db.prepare('SELECT * FROM conversations WHERE id = ?'),
      touchConv: db.prepare(
        'UPDATE conversations SET updated_at = max(updated_at, ?) WHERE id = ?',
      ),
      nextSeq: db.prepare(
        'SELECT coalesce(max(seq), 0) + 1 AS seq FROM messages WHERE conversation_id = ?',
      ),
      insertMsg: db.prepare(
        `INSERT INTO messages (conversation_id, seq, role, channel, text, tool_calls, tool_call_id,
           tool_name, tool_args, outcome, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      messages: db.prepare(
        'SELECT * FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?',
      ),
      lastMsg: db.prepare(
        'SELECT * FROM messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1',
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
      insertGrant: db.prepare(
        `INSERT INTO grants (id, tool, channel, scope, expiry, created_by, created_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
      ),
      grantsFor: db.prepare(
        'SELECT * FROM grants WHERE tool = ? AND revoked_at IS NULL ORDER BY created_at',
      ),
      listGrants: db.prepare('SELECT * FROM grants ORDER BY created_at'),
      revokeGrant: db.prepare(
        'UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
      ),
      insertTimer: db.prepare(
        'INSERT INTO timers (id, kind, label, due_at, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      pendingTimers: db.prepare(
        'SELECT id, kind, label, due_at, created_at FROM timers WHERE finished_at IS NULL ORDER BY due_at, id',
      ),
      finishTimer: db.prepare(
        'UPDATE timers SET finished_at = ?, outcome = ? WHERE id = ? AND finished_at IS NULL',
      ),
    }
  }

  /** Told when writes start failing (disk full, file made read-only) and when they work again. */
  onWriteHealth(listener: (failing: string | undefined) => void): void {
    this.#writes.listen(listener)
  }

  createConversation(input: { channel: Channel; title?: string; at: number }): Conversation {
    const id = randomUUID()
    this.#writes.run(() =>
      this.#q.insertConv.run(id, input.channel, input.title ?? null, input.at, input.at),
    )
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

  readonly #appendTx = (conversationId: string, m: NewMessage): StoredMessage => {
    if (!this.#q.getConv.get(conversationId)) {
      throw new NocturnError(
        'NOC_ERR_STORE_UNKNOWN_CONVERSATION',
        `no conversation with id ${conversationId}`,
      )
    }
    const { seq } = this.#q.nextSeq.get(conversationId) as { seq: number }
    this.#q.insertMsg.run(
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
    )
    this.#q.touchConv.run(m.at, conversationId)
    return { ...m, seq, conversationId }
  }

  append(conversationId: string, message: NewMessage): StoredMessage {
    // One transaction: the message and the conversation's activity time land together or not at all.
    return this.#writes.run(() => this.#db.transaction(this.#appendTx)(conversationId, message))
  }

  messages(
    conversationId: string,
    page: { afterSeq?: number; limit?: number } = {},
  ): StoredMessage[] {
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

  listConversations(page: ConversationPage = {}): Conversation[] {
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

  prune(policy: { before?: number | undefined; keep?: number | undefined }): number {
    return this.#db.transaction(() => {
      let removed = 0
      if (policy.before !== undefined) removed += this.#q.pruneBefore.run(policy.before).changes
      if (policy.keep !== undefined)
        removed += this.#q.pruneKeep.run(Math.max(0, policy.keep)).changes
      return removed
    })()
  }

  vacuum(): void {
    // VACUUM rewrites the file without the freed pages; the WAL is checkpointed first so the
    // deleted rows are not left readable in the log either.
    this.#db.pragma('wal_checkpoint(TRUNCATE)')
    this.#db.exec('VACUUM')
    this.#db.pragma('wal_checkpoint(TRUNCATE)')
  }

  addGrant(grant: NewGrant): Grant {
    const id = randomUUID()
    this.#q.insertGrant.run(
      id,
      grant.tool,
      grant.channel,
      JSON.stringify(grant.scope),
      JSON.stringify(grant.expiry),
      JSON.stringify(grant.createdBy),
      grant.createdAt,
    )
    return { ...grant, id, revokedAt: null }
  }

  grantsFor(tool: string): Grant[] {
    return (this.#q.grantsFor.all(tool) as GrantRow[]).map(toGrant)
  }

  listGrants(): Grant[] {
    return (this.#q.listGrants.all() as GrantRow[]).map(toGrant)
  }

  revokeGrant(id: string, at: number): boolean {
    return this.#q.revokeGrant.run(at, id).changes > 0
  }

  addTimer(timer: NewTimer): StoredTimer {
    const id = randomUUID()
    this.#writes.run(() =>
      this.#q.insertTimer.run(id, timer.kind, timer.label, timer.dueAt, timer.createdAt),
    )
    return { ...timer, id }
  }

  pendingTimers(): StoredTimer[] {
    const rows = this.#q.pendingTimers.all() as Array<{
      id: string
      kind: 'timer' | 'alarm'
      label: string | null
      due_at: number
      created_at: number
    }>
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      label: r.label,
      dueAt: r.due_at,
      createdAt: r.created_at,
    }))
  }

  finishTimer(id: string, at: number, outcome: TimerOutcome): boolean {
    return this.#writes.run(() => this.#q.finishTimer.run(at, outcome, id).changes > 0)
  }

  close(): void {
    if (this.#db.open) this.#db.close()
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
  if (r.role === 'user') return { ...base, role: 'user', text: r.text }
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

function toGrant(r: GrantRow): Grant {
  return {
    id: r.id,
    tool: r.tool,
    channel: r.channel,
    scope: JSON.parse(r.scope),
    expiry: JSON.parse(r.expiry),
    createdBy: JSON.parse(r.created_by),
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  }
}
