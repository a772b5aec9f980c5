import type Database from 'better-sqlite3'
import type { Conversation, NewMessage, StoredMessage } from '../../core/conversation.js'
import type { Channel } from '../../core/types.js'
import type { ApprovalHistory } from '../../ports/approval-history.js'
import type { Grant, GrantStore, NewGrant } from '../../ports/grant-store.js'
import type { OwnerCredentialStore } from '../../ports/owner-credentials.js'
import type { PushSubscriptionStore } from '../../ports/push-subscriptions.js'
import type { SettingsStore } from '../../ports/settings-store.js'
import type { NewTimer, StoredTimer, TimerOutcome, TimerStore } from '../../ports/timer-store.js'
import type { ConversationPage, TranscriptStore } from '../../ports/transcript-store.js'
import type { WakeLogStore } from '../../ports/wake-log.js'
import { SqliteApprovalHistory } from './approval-history.js'
import { SqliteGrants } from './grants.js'
import { SqliteOwnerCredentials } from './owner-credentials.js'
import { SqlitePushSubscriptions } from './push-subscriptions.js'
import type { StoreNotice } from './restore.js'
import { SqliteSettings } from './settings.js'
import { StoreConnection, type UpkeepOptions } from './store-connection.js'
import { SqliteTimers } from './timers.js'
import { SqliteTranscripts } from './transcripts.js'
import { SqliteWakeLog } from './wake-log.js'

/** Each port's statements on one connection; made anew when a write-back reopens it. */
function tablesOn(db: Database.Database) {
  return {
    transcripts: new SqliteTranscripts(db),
    grants: new SqliteGrants(db),
    timers: new SqliteTimers(db),
    settings: new SqliteSettings(db),
    history: new SqliteApprovalHistory(db),
    push: new SqlitePushSubscriptions(db),
    owners: new SqliteOwnerCredentials(db),
    wakes: new SqliteWakeLog(db),
  }
}

/**
 * The transcript and grant store on SQLite (better-sqlite3): one file, WAL, append-only messages.
 * Each port's tables are their own class (`transcripts.ts`, `grants.ts`, …) and the file's upkeep
 * is the `StoreConnection`'s; what is left here is the one face of them all, and how durable each
 * write must be (a `synced` write is on the card when it returns, a `cheap` one at the next
 * checkpoint: docs/store.md).
 */
export class SqliteStore implements TranscriptStore, GrantStore, TimerStore, SettingsStore {
  readonly #conn: StoreConnection
  /** The statements, on the connection open now (made anew with it). */
  #t: ReturnType<typeof tablesOn>
  /** What restoring a destroyed store at open said, for the appliance to show. */
  readonly restored: StoreNotice | undefined
  /**
   * Every approval's ending, in the same file and under the same retention. A decided approval is
   * worth a sync, as a grant is; the face stays the same when the file is written back and reopened.
   */
  readonly history: ApprovalHistory = {
    record: (ending) => this.#conn.write('synced', () => this.#t.history.record(ending)),
    list: (page) => this.#t.history.list(page),
  }
  /**
   * The phones' Web Push subscriptions, in the same file; one stable face like the history's. A
   * subscription is worth a sync: lost, a phone in a pocket hears nothing until it subscribes again.
   */
  readonly push: PushSubscriptionStore = {
    putPushSubscription: (sub) =>
      this.#conn.write('synced', () => this.#t.push.putPushSubscription(sub)),
    removePushSubscription: (phone, endpoint) =>
      this.#conn.write('synced', () => this.#t.push.removePushSubscription(phone, endpoint)),
    pushSubscriptions: (phone) => this.#t.push.pushSubscriptions(phone),
    removePhonePushSubscriptions: (phone) =>
      this.#conn.write('synced', () => this.#t.push.removePhonePushSubscriptions(phone)),
  }
  /**
   * The phones' WebAuthn credentials, in the same file. Each is worth a sync: lost, a critical yes
   * from that phone waits until it registers again; a counter lost would take a replay back.
   */
  readonly owners: OwnerCredentialStore = {
    ownerCredential: (phone) => this.#t.owners.ownerCredential(phone),
    putOwnerCredential: (c) =>
      this.#conn.write('synced', () => this.#t.owners.putOwnerCredential(c)),
    advanceOwnerCounter: (phone, id, counter) =>
      this.#conn.write('synced', () => this.#t.owners.advanceOwnerCounter(phone, id, counter)),
    removeOwnerCredential: (phone) =>
      this.#conn.write('synced', () => this.#t.owners.removeOwnerCredential(phone)),
    ownerPhones: () => this.#t.owners.ownerPhones(),
  }

  /**
   * The speaker's recent wakes, in the same file; bounded on every insert. A cheap write: a wake
   * lost in a power cut is one the household did not get to mark.
   */
  readonly wakes: WakeLogStore = {
    addWake: (w, bounds) => this.#conn.write('cheap', () => this.#t.wakes.addWake(w, bounds)),
    keepFeatures: (id, windows) =>
      this.#conn.write('cheap', () => this.#t.wakes.keepFeatures(id, windows)),
    settleWake: (id, confirmed, said) =>
      this.#conn.write('cheap', () => this.#t.wakes.settleWake(id, confirmed, said)),
    checkedLocally: (id, verdict) =>
      this.#conn.write('cheap', () => this.#t.wakes.checkedLocally(id, verdict)),
    // A mark teaches the speaker: worth a sync, as a grant is.
    markWake: (id, mark, by, at) =>
      this.#conn.write('synced', () => this.#t.wakes.markWake(id, mark, by, at)),
    wake: (id) => this.#t.wakes.wake(id),
    wakes: (page) => this.#t.wakes.wakes(page),
    lesson: (phrase) => this.#t.wakes.lesson(phrase),
  }

  constructor(path: string, options: { now?: number } = {}) {
    this.#conn = new StoreConnection(path, options.now ?? Date.now(), (db) => {
      this.#t = tablesOn(db)
    })
    this.restored = this.#conn.restored
    this.#t = tablesOn(this.#conn.db)
  }

  /** Told when writes start failing (disk full, file made read-only) and when they work again. */
  onWriteHealth(listener: (failing: string | undefined) => void): void {
    this.#conn.onWriteHealth(listener)
  }

  createConversation(input: { channel: Channel; title?: string; at: number }): Conversation {
    return this.#conn.write('cheap', () => this.#t.transcripts.createConversation(input))
  }

  getConversation(id: string): Conversation | undefined {
    return this.#t.transcripts.getConversation(id)
  }

  append(conversationId: string, message: NewMessage): StoredMessage {
    // A spoken piece of transcript rides on the next checkpoint; what was typed, and a tool's
    // outcome (a decided approval among them), is on the card when append returns.
    const kind = message.channel === 'text' || message.role === 'tool' ? 'synced' : 'cheap'
    return this.#conn.write(kind, () => this.#t.transcripts.append(conversationId, message))
  }

  messages(
    conversationId: string,
    page: { afterSeq?: number; limit?: number } = {},
  ): StoredMessage[] {
    return this.#t.transcripts.messages(conversationId, page)
  }

  lastMessage(conversationId: string): StoredMessage | undefined {
    return this.#t.transcripts.lastMessage(conversationId)
  }

  typedBy(conversationId: string, limit: number): string[] {
    return this.#t.transcripts.typedBy(conversationId, limit)
  }

  listConversations(page: ConversationPage = {}): Conversation[] {
    return this.#t.transcripts.listConversations(page)
  }

  deleteConversation(id: string): boolean {
    return this.#conn.write('synced', () => this.#t.transcripts.deleteConversation(id))
  }

  recordUsage(conversationId: string, tokens: number, at: number): void {
    if (!Number.isSafeInteger(tokens) || tokens < 0) {
      throw new TypeError(`token count must be a whole number ≥ 0, got ${String(tokens)}`)
    }
    this.#t.transcripts.requireConversation(conversationId)
    this.#conn.write('cheap', () => this.#t.transcripts.recordUsage(conversationId, tokens, at))
  }

  usage(of: { conversationId?: string; since?: number }): number {
    return this.#t.transcripts.usage(of)
  }

  prune(policy: { before?: number | undefined; keep?: number | undefined }): number {
    const { transcripts, history } = this.#t
    return this.#conn.write(
      'cheap',
      this.#conn.db.transaction(() => {
        let removed = 0
        if (policy.before !== undefined) {
          removed += transcripts.pruneBefore(policy.before)
          removed += history.pruneBefore(policy.before)
          transcripts.pruneUsage(policy.before)
        }
        if (policy.keep !== undefined) removed += transcripts.pruneKeep(Math.max(0, policy.keep))
        return removed
      }),
    )
  }

  vacuum(): void {
    this.#conn.vacuum()
  }

  addGrant(grant: NewGrant): Grant {
    return this.#conn.write('synced', () => this.#t.grants.addGrant(grant))
  }

  grantsFor(tool: string): Grant[] {
    return this.#t.grants.grantsFor(tool)
  }

  listGrants(): Grant[] {
    return this.#t.grants.listGrants()
  }

  revokeGrant(id: string, at: number): boolean {
    return this.#conn.write('synced', () => this.#t.grants.revokeGrant(id, at))
  }

  addTimer(timer: NewTimer): StoredTimer {
    return this.#conn.write('synced', () => this.#t.timers.addTimer(timer))
  }

  pendingTimers(): StoredTimer[] {
    return this.#t.timers.pendingTimers()
  }

  finishTimer(id: string, at: number, outcome: TimerOutcome): boolean {
    return this.#conn.write('synced', () => this.#t.timers.finishTimer(id, at, outcome))
  }

  getSetting(name: string): string | undefined {
    return this.#t.settings.getSetting(name)
  }

  setSetting(name: string, value: string, at: number): void {
    this.#conn.write('cheap', () => this.#t.settings.setSetting(name, value, at))
  }

  /** A checkpoint now (a session ended): `StoreConnection.checkpoint`. */
  checkpoint(mode: 'PASSIVE' | 'TRUNCATE' = 'PASSIVE'): void {
    this.#conn.checkpoint(mode)
  }

  /** The file's upkeep while the appliance runs: `StoreConnection.startUpkeep`. */
  startUpkeep(options: UpkeepOptions): () => Promise<void> {
    return this.#conn.startUpkeep(options)
  }

  /** Closes the store, its file written back first if it was lost: `StoreConnection.close`. */
  close(onNotice?: (notice: StoreNotice) => void): void {
    this.#conn.close(onNotice)
  }
}
