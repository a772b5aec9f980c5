import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type {
  Conversation,
  NewMessage,
  StoredMessage,
  ToolCallRecord,
  ToolOutcome,
} from '../../core/conversation.js'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Channel } from '../../core/types.js'
import type { ApprovalHistory } from '../../ports/approval-history.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'
import type { Grant, GrantStore, NewGrant } from '../../ports/grant-store.js'
import type { OwnerCredentialStore } from '../../ports/owner-credentials.js'
import type { PushSubscriptionStore } from '../../ports/push-subscriptions.js'
import type { SettingsStore } from '../../ports/settings-store.js'
import type { NewTimer, StoredTimer, TimerOutcome, TimerStore } from '../../ports/timer-store.js'
import type { ConversationPage, TranscriptStore } from '../../ports/transcript-store.js'
import { SqliteApprovalHistory } from './approval-history.js'
import { newestBackup, rotateBackup } from './backup.js'
import { checkStoreFiles } from './integrity.js'
import { openDatabase } from './open.js'
import { SqliteOwnerCredentials } from './owner-credentials.js'
import { SqlitePushSubscriptions } from './push-subscriptions.js'
import { restoreIfDestroyed, type StoreNotice } from './restore.js'
import {
  type FileIdentity,
  identify,
  lostHow,
  notWrittenBack,
  writeBack,
  writtenBack,
} from './store-file.js'
import { WriteHealth } from './write-health.js'

/**
 * How often the upkeep checkpoints (when something cheap was written) and looks at the file: the
 * most a power cut or a card gone read-only can take of the spoken transcript (docs/store.md).
 */
export const CHECKPOINT_EVERY_MS = 2000
/** How often, while writes happen, the rotated copy is made. */
export const BACKUP_EVERY_MS = 3_600_000

interface Upkeep {
  readonly clock: Clock
  timer: TimerHandle | undefined
  backup: Promise<void> | undefined
  lastBackupAt: number
}

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
export class SqliteStore implements TranscriptStore, GrantStore, TimerStore, SettingsStore {
  #db: Database.Database
  #q: Statements
  readonly #path: string
  readonly #writes: WriteHealth
  #file: FileIdentity | undefined // undefined: in memory, no file to lose
  /** A voice transcript piece written with synchronous=NORMAL since the last checkpoint. */
  #unsynced = false
  #writtenSinceBackup = false
  /** What restoring a destroyed store at open said, for the appliance to show. */
  readonly restored: StoreNotice | undefined
  #upkeep: Upkeep | undefined
  /** The file was lost and could not be written back: said once while running. */
  #lostSaid = false
  /** The approval history's statements, on the connection open now (made anew with it). */
  #history: SqliteApprovalHistory
  /**
   * Every approval's ending, in the same file and under the same retention. A decided approval is
   * worth a sync, as a grant is; the face stays the same when the file is written back and reopened.
   */
  readonly history: ApprovalHistory = {
    record: (ending) => this.#write('synced', () => this.#history.record(ending)),
    list: (page) => this.#history.list(page),
  }
  /** The Web Push subscriptions' statements, on the connection open now (made anew with it). */
  #push: SqlitePushSubscriptions
  /**
   * The phones' Web Push subscriptions, in the same file; one stable face like the history's. A
   * subscription is worth a sync: lost, a phone in a pocket hears nothing until it subscribes again.
   */
  readonly push: PushSubscriptionStore = {
    putPushSubscription: (sub) => this.#write('synced', () => this.#push.putPushSubscription(sub)),
    removePushSubscription: (phone, endpoint) =>
      this.#write('synced', () => this.#push.removePushSubscription(phone, endpoint)),
    pushSubscriptions: (phone) => this.#push.pushSubscriptions(phone),
    removePhonePushSubscriptions: (phone) =>
      this.#write('synced', () => this.#push.removePhonePushSubscriptions(phone)),
  }
  /** The WebAuthn credentials' statements, on the connection open now (made anew with it). */
  #owners: SqliteOwnerCredentials
  /**
   * The phones' WebAuthn credentials, in the same file. Each is worth a sync: lost, a critical yes
   * from that phone waits until it registers again; a counter lost would take a replay back.
   */
  readonly owners: OwnerCredentialStore = {
    ownerCredential: (phone) => this.#owners.ownerCredential(phone),
    putOwnerCredential: (c) => this.#write('synced', () => this.#owners.putOwnerCredential(c)),
    advanceOwnerCounter: (phone, id, counter) =>
      this.#write('synced', () => this.#owners.advanceOwnerCounter(phone, id, counter)),
    removeOwnerCredential: (phone) =>
      this.#write('synced', () => this.#owners.removeOwnerCredential(phone)),
    ownerPhones: () => this.#owners.ownerPhones(),
  }

  constructor(path: string, options: { now?: number } = {}) {
    this.#path = path
    const onDisk = path !== ':memory:'
    if (onDisk) checkStoreFiles(path)
    this.restored = onDisk ? restoreIfDestroyed(path, options.now ?? Date.now()) : undefined
    this.#db = openDatabase(path)
    this.#q = prepare(this.#db)
    this.#history = new SqliteApprovalHistory(this.#db)
    this.#push = new SqlitePushSubscriptions(this.#db)
    this.#owners = new SqliteOwnerCredentials(this.#db)
    this.#file = onDisk ? identify(path) : undefined
    this.#writes = new WriteHealth(path)
  }

  /** Told when writes start failing (disk full, file made read-only) and when they work again. */
  onWriteHealth(listener: (failing: string | undefined) => void): void {
    this.#writes.listen(listener)
  }

  createConversation(input: { channel: Channel; title?: string; at: number }): Conversation {
    const id = randomUUID()
    this.#write('cheap', () =>
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
      m.role === 'user' ? (m.by ?? null) : null,
    )
    this.#q.touchConv.run(m.at, conversationId)
    return { ...m, seq, conversationId }
  }

  append(conversationId: string, message: NewMessage): StoredMessage {
    // One transaction: the message and the conversation's activity time land together or not at all.
    // A spoken piece of transcript rides on the next checkpoint; what was typed, and a tool's
    // outcome (a decided approval among them), is on the card when append returns.
    const kind = message.channel === 'text' || message.role === 'tool' ? 'synced' : 'cheap'
    return this.#write(kind, () => this.#db.transaction(this.#appendTx)(conversationId, message))
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
    return this.#write('synced', () => this.#q.deleteConv.run(id).changes > 0)
  }

  recordUsage(conversationId: string, tokens: number, at: number): void {
    if (!Number.isSafeInteger(tokens) || tokens < 0) {
      throw new TypeError(`token count must be a whole number ≥ 0, got ${String(tokens)}`)
    }
    if (!this.#q.getConv.get(conversationId)) {
      throw new NocturnError(
        'NOC_ERR_STORE_UNKNOWN_CONVERSATION',
        `no conversation ${conversationId} to record token usage for`,
      )
    }
    this.#write('cheap', () => this.#q.addUsage.run(conversationId, at, tokens))
  }

  usage(of: { conversationId?: string; since?: number }): number {
    const row = (
      of.conversationId !== undefined
        ? this.#q.usageOf.get(of.conversationId, of.since ?? 0)
        : this.#q.usageSince.get(of.since ?? 0)
    ) as { tokens: number | null }
    return row.tokens ?? 0
  }

  prune(policy: { before?: number | undefined; keep?: number | undefined }): number {
    return this.#write(
      'cheap',
      this.#db.transaction(() => {
        let removed = 0
        if (policy.before !== undefined) {
          removed += this.#q.pruneBefore.run(policy.before).changes
          removed += this.#history.pruneBefore(policy.before)
          this.#q.pruneUsage.run(policy.before)
        }
        if (policy.keep !== undefined)
          removed += this.#q.pruneKeep.run(Math.max(0, policy.keep)).changes
        return removed
      }),
    )
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
    this.#write('synced', () =>
      this.#q.insertGrant.run(
        id,
        grant.tool,
        grant.channel,
        JSON.stringify(grant.scope),
        JSON.stringify(grant.expiry),
        JSON.stringify(grant.createdBy),
        grant.createdAt,
      ),
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
    return this.#write('synced', () => this.#q.revokeGrant.run(at, id).changes > 0)
  }

  addTimer(timer: NewTimer): StoredTimer {
    const id = randomUUID()
    this.#write('synced', () =>
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
    return this.#write('synced', () => this.#q.finishTimer.run(at, outcome, id).changes > 0)
  }

  /**
   * The durability policy (docs/store.md): a `synced` write is fsynced (synchronous=FULL, the log
   * synced at its commit) before it returns; a `cheap` one is left in the OS cache for the next
   * checkpoint, at most `CHECKPOINT_EVERY_MS` away while the upkeep runs. A synced commit also
   * makes every cheap one before it durable: the log is one file.
   */
  #write<T>(kind: 'synced' | 'cheap', write: () => T): T {
    if (kind === 'cheap') {
      const result = this.#writes.run(write)
      this.#unsynced = true
      this.#writtenSinceBackup = true
      return result
    }
    this.#db.pragma('synchronous = FULL')
    try {
      const result = this.#writes.run(write)
      this.#unsynced = false
      this.#writtenSinceBackup = true
      return result
    } finally {
      this.#db.pragma('synchronous = NORMAL')
    }
  }

  /**
   * Moves the log into the database file and syncs both (a session ended, or the schedule): what
   * was written so far survives a power cut or the card turning read-only. `TRUNCATE` also
   * empties the log file, so the file on the card is the whole store.
   */
  checkpoint(mode: 'PASSIVE' | 'TRUNCATE' = 'PASSIVE'): void {
    this.#writes.run(() => this.#db.pragma(`wal_checkpoint(${mode})`))
    this.#unsynced = false
  }

  /**
   * Keeps the promise of docs/store.md while the appliance runs: every `CHECKPOINT_EVERY_MS` a
   * checkpoint if anything cheap was written, a look at the file (deleted or replaced under the
   * running device: written back from the open connection), and, every `backupEveryMs` with
   * writes since the last, a rotated copy by SQLite's online backup (none yet: one now).
   */
  startUpkeep(options: {
    readonly clock: Clock
    readonly onNotice: (notice: StoreNotice) => void
    readonly everyMs?: number
    readonly backupEveryMs?: number
  }): () => Promise<void> {
    const { clock } = options
    const everyMs = options.everyMs ?? CHECKPOINT_EVERY_MS
    const backupEveryMs = options.backupEveryMs ?? BACKUP_EVERY_MS
    const upkeep: Upkeep = {
      clock,
      timer: undefined,
      backup: undefined,
      lastBackupAt: newestBackup(this.#path)?.madeAt ?? Number.NEGATIVE_INFINITY,
    }
    if (upkeep.lastBackupAt === Number.NEGATIVE_INFINITY) this.#writtenSinceBackup = true
    this.#upkeep = upkeep
    const tick = () => {
      upkeep.timer = undefined
      // The copy reads the connection the look would close: the look waits for the next tick.
      const notice = upkeep.backup ? undefined : this.#look(clock.now(), 'tick')
      if (notice) options.onNotice(notice)
      if (this.#unsynced) {
        try {
          this.checkpoint()
        } catch {
          // Said by the write health (the LED and the status); tried again at the next tick.
        }
      }
      if (
        !upkeep.backup &&
        this.#writtenSinceBackup &&
        clock.now() - upkeep.lastBackupAt >= backupEveryMs
      ) {
        this.#writtenSinceBackup = false
        upkeep.backup = rotateBackup(this.#db, this.#path)
          .then(() => {
            upkeep.lastBackupAt = clock.now()
          })
          .catch(() => {
            this.#writtenSinceBackup = true // a card that refuses it now may take it next time
          })
          .finally(() => {
            upkeep.backup = undefined
          })
      }
      if (this.#upkeep === upkeep) upkeep.timer = clock.setTimeout(tick, everyMs)
    }
    upkeep.timer = clock.setTimeout(tick, everyMs)
    return async () => {
      if (this.#upkeep !== upkeep) return
      this.#upkeep = undefined
      if (upkeep.timer) clock.clearTimeout(upkeep.timer)
      await upkeep.backup
      // One more look as the device stops: a file lost since the last one (up to everyMs ago)
      // would otherwise be closed with the process, and every chat with it (issue 43). Said
      // again even if said before, while the LED and the status can still show it.
      this.#lostSaid = false
      const notice = this.#look(clock.now(), 'stop')
      if (notice) options.onNotice(notice)
    }
  }

  /**
   * The file opened is still the one at the path; if not, it is written back from the open
   * connection and reopened there (at `close`, left closed). A file that cannot be written back is
   * said with where the store now is and what is lost; said once while running.
   */
  #look(now: number, at: 'tick' | 'stop' | 'close'): StoreNotice | undefined {
    const how = this.#file && lostHow(this.#path, this.#file)
    if (!how) return undefined
    try {
      const { aside } = writeBack(this.#db, this.#path, how === 'replaced by another file', now)
      if (at !== 'close') this.#reopen(this.#path)
      this.#file = identify(this.#path)
      this.#lostSaid = false
      return {
        event: 'store_file_lost',
        message: writtenBack(this.#path, how, aside, at !== 'tick'),
      }
    } catch (err) {
      // Closed, the image on disk but not at its name: go on in the image rather than in nothing.
      const keptAt = this.#db.open ? undefined : `${this.#path}.rewrite.tmp`
      if (keptAt && at !== 'close') this.#reopen(keptAt)
      if (this.#lostSaid) return undefined
      this.#lostSaid = true
      return {
        event: 'store_file_unrecoverable',
        message: notWrittenBack(this.#path, how, errorText(err), keptAt, at !== 'tick'),
      }
    }
  }

  /** The connection and its statements, on `file`. */
  #reopen(file: string): void {
    this.#db = openDatabase(file)
    this.#q = prepare(this.#db)
    this.#history = new SqliteApprovalHistory(this.#db)
    this.#push = new SqlitePushSubscriptions(this.#db)
    this.#owners = new SqliteOwnerCredentials(this.#db)
  }

  getSetting(name: string): string | undefined {
    const row = this.#q.getSetting.get(name) as { value: string } | undefined
    return row?.value
  }

  setSetting(name: string, value: string, at: number): void {
    this.#write('cheap', () => this.#q.setSetting.run(name, value, at))
  }

  /**
   * Closes the store. Its file is looked at first, as the upkeep does: a store whose file was lost
   * since (or with no upkeep) is written back before the connection, the last thing holding it,
   * closes; `onNotice` is told what had to be said about it.
   */
  close(onNotice?: (notice: StoreNotice) => void): void {
    if (this.#upkeep?.timer) this.#upkeep.clock.clearTimeout(this.#upkeep.timer)
    this.#upkeep = undefined
    if (!this.#db.open) return
    this.#lostSaid = false
    const notice = this.#look(Date.now(), 'close')
    if (this.#db.open) this.#db.close()
    if (notice) onNotice?.(notice)
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
    revokeGrant: db.prepare('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    insertTimer: db.prepare(
      'INSERT INTO timers (id, kind, label, due_at, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    pendingTimers: db.prepare(
      'SELECT id, kind, label, due_at, created_at FROM timers WHERE finished_at IS NULL ORDER BY due_at, id',
    ),
    finishTimer: db.prepare(
      'UPDATE timers SET finished_at = ?, outcome = ? WHERE id = ? AND finished_at IS NULL',
    ),
    getSetting: db.prepare('SELECT value FROM settings WHERE name = ?'),
    setSetting: db.prepare(
      `INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    ),
  }
}
type Statements = ReturnType<typeof prepare>

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
