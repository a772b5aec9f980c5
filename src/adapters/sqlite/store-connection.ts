import type Database from 'better-sqlite3'
import { errorText } from '../../core/errors.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'
import { newestBackup, rotateBackup } from './backup.js'
import { checkStoreFiles } from './integrity.js'
import { openDatabase } from './open.js'
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

/** How the upkeep runs: its clock, who is told what it had to do, and how often. */
export interface UpkeepOptions {
  readonly clock: Clock
  readonly onNotice: (notice: StoreNotice) => void
  readonly everyMs?: number
  readonly backupEveryMs?: number
}

/**
 * The one connection to the store's file, and the file's upkeep: how durable each write is, the
 * checkpoints, the rotated backup, and the look that finds the file deleted or replaced under the
 * running device and writes it back. Writing back reopens the connection, so whoever holds
 * statements on it is told through `reopened` and prepares them anew.
 */
export class StoreConnection {
  #db: Database.Database
  readonly #path: string
  readonly #reopened: (db: Database.Database) => void
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

  constructor(path: string, now: number, reopened: (db: Database.Database) => void) {
    this.#path = path
    this.#reopened = reopened
    const onDisk = path !== ':memory:'
    if (onDisk) checkStoreFiles(path)
    this.restored = onDisk ? restoreIfDestroyed(path, now) : undefined
    this.#db = openDatabase(path)
    this.#file = onDisk ? identify(path) : undefined
    this.#writes = new WriteHealth(path)
  }

  /** The connection open now; a write-back replaces it (see `reopened`). */
  get db(): Database.Database {
    return this.#db
  }

  /** Told when writes start failing (disk full, file made read-only) and when they work again. */
  onWriteHealth(listener: (failing: string | undefined) => void): void {
    this.#writes.listen(listener)
  }

  /**
   * The durability policy (docs/store.md): a `synced` write is fsynced (synchronous=FULL, the log
   * synced at its commit) before it returns; a `cheap` one is left in the OS cache for the next
   * checkpoint, at most `CHECKPOINT_EVERY_MS` away while the upkeep runs. A synced commit also
   * makes every cheap one before it durable: the log is one file.
   */
  write<T>(kind: 'synced' | 'cheap', write: () => T): T {
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

  vacuum(): void {
    // VACUUM rewrites the file without the freed pages; the WAL is checkpointed first so the
    // deleted rows are not left readable in the log either.
    this.#db.pragma('wal_checkpoint(TRUNCATE)')
    this.#db.exec('VACUUM')
    this.#db.pragma('wal_checkpoint(TRUNCATE)')
  }

  /**
   * Keeps the promise of docs/store.md while the appliance runs: every `CHECKPOINT_EVERY_MS` a
   * checkpoint if anything cheap was written, a look at the file (deleted or replaced under the
   * running device: written back from the open connection), and, every `backupEveryMs` with
   * writes since the last, a rotated copy by SQLite's online backup (none yet: one now).
   */
  startUpkeep(options: UpkeepOptions): () => Promise<void> {
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

  /** The connection on `file`, and the statements of whoever holds them on it. */
  #reopen(file: string): void {
    this.#db = openDatabase(file)
    this.#reopened(this.#db)
  }

  /**
   * Closes the connection. Its file is looked at first, as the upkeep does: a store whose file was
   * lost since (or with no upkeep) is written back before the connection, the last thing holding
   * it, closes; `onNotice` is told what had to be said about it.
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
