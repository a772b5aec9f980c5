import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { NewTimer, StoredTimer, TimerOutcome, TimerStore } from '../../ports/timer-store.js'

/** Timers and alarms on the store's own database (migration 2), kept so they ring after a restart. */
export class SqliteTimers implements TimerStore {
  readonly #q

  constructor(db: Database.Database) {
    this.#q = {
      insert: db.prepare(
        'INSERT INTO timers (id, kind, label, due_at, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      pending: db.prepare(
        'SELECT id, kind, label, due_at, created_at FROM timers WHERE finished_at IS NULL ORDER BY due_at, id',
      ),
      finish: db.prepare(
        'UPDATE timers SET finished_at = ?, outcome = ? WHERE id = ? AND finished_at IS NULL',
      ),
    }
  }

  addTimer(timer: NewTimer): StoredTimer {
    const id = randomUUID()
    this.#q.insert.run(id, timer.kind, timer.label, timer.dueAt, timer.createdAt)
    return { ...timer, id }
  }

  pendingTimers(): StoredTimer[] {
    const rows = this.#q.pending.all() as Array<{
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
    return this.#q.finish.run(at, outcome, id).changes > 0
  }
}
