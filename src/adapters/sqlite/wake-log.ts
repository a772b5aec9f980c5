import type Database from 'better-sqlite3'
import type {
  NewWake,
  WakeConfirmed,
  WakeEntry,
  WakeKind,
  WakeLesson,
  WakeLocalVerdict,
  WakeLogBounds,
  WakeLogStore,
  WakeMark,
} from '../../ports/wake-log.js'
import { isWakeMark } from '../../protocol/wake-ops.js'

interface Row {
  id: number
  kind: WakeKind
  at: number
  phrase: string
  score: number
  confirmed: WakeConfirmed
  said: string | null
  local: string | null
  mark: string | null
  marked_by: string | null
  marked_at: number | null
  window_floats: number
  features: Buffer | null
}

const SUMMARY =
  'id, kind, at, phrase, score, confirmed, said, local, mark, marked_by, marked_at, window_floats, length(features) AS bytes'

/** The speaker's recent wakes on the store's own database (migration 12), newest first. */
export class SqliteWakeLog implements WakeLogStore {
  readonly #insert: Database.Statement
  readonly #trim: Database.Statement
  readonly #settle: Database.Statement
  readonly #local: Database.Statement
  readonly #keep: Database.Statement
  readonly #mark: Database.Statement
  readonly #one: Database.Statement
  readonly #page: Database.Statement
  readonly #pageBefore: Database.Statement
  readonly #features: Database.Statement

  constructor(db: Database.Database) {
    this.#insert = db.prepare(
      `INSERT INTO wakes (kind, at, phrase, score, confirmed, window_floats, features)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    )
    // The newest `count`, none older than the cut: whichever keeps fewer.
    this.#trim = db.prepare(
      `DELETE FROM wakes WHERE at < ? OR id NOT IN (SELECT id FROM wakes ORDER BY id DESC LIMIT ?)`,
    )
    this.#keep = db.prepare('UPDATE wakes SET window_floats = ?, features = ? WHERE id = ?')
    this.#settle = db.prepare('UPDATE wakes SET confirmed = ?, said = ? WHERE id = ?')
    this.#local = db.prepare('UPDATE wakes SET local = ? WHERE id = ?')
    this.#mark = db.prepare('UPDATE wakes SET mark = ?, marked_by = ?, marked_at = ? WHERE id = ?')
    this.#one = db.prepare(`SELECT ${SUMMARY} FROM wakes WHERE id = ?`)
    this.#page = db.prepare(`SELECT ${SUMMARY} FROM wakes ORDER BY id DESC LIMIT ?`)
    this.#pageBefore = db.prepare(
      `SELECT ${SUMMARY} FROM wakes WHERE id < ? ORDER BY id DESC LIMIT ?`,
    )
    this.#features = db.prepare(
      `SELECT kind, confirmed, mark, window_floats, features FROM wakes
       WHERE phrase = ? AND features IS NOT NULL`,
    )
  }

  addWake(w: NewWake, bounds: WakeLogBounds): WakeEntry {
    const r = this.#insert.run(
      w.kind,
      w.at,
      w.phrase,
      w.score,
      w.confirmed,
      w.windows[0]?.length ?? 0,
      blobOf(w.windows),
    )
    this.#trim.run(w.at - bounds.maxAgeMs, bounds.count)
    return this.wake(Number(r.lastInsertRowid)) as WakeEntry
  }

  keepFeatures(id: number, windows: readonly Float32Array[]): void {
    this.#keep.run(windows[0]?.length ?? 0, blobOf(windows), id)
  }

  settleWake(id: number, confirmed: WakeConfirmed, said?: string): void {
    this.#settle.run(confirmed, said ?? null, id)
  }

  checkedLocally(id: number, verdict: WakeLocalVerdict): void {
    this.#local.run(verdict, id)
  }

  markWake(id: number, mark: WakeMark, by: string, at: number): WakeEntry | undefined {
    this.#mark.run(mark, by, at, id)
    return this.wake(id)
  }

  wake(id: number): WakeEntry | undefined {
    const row = this.#one.get(id) as (Omit<Row, 'features'> & { bytes: number | null }) | undefined
    return row && entryOf(row)
  }

  wakes(page: { limit: number; before?: number }): WakeEntry[] {
    const rows = (
      page.before === undefined
        ? this.#page.all(page.limit)
        : this.#pageBefore.all(page.before, page.limit)
    ) as (Omit<Row, 'features'> & { bytes: number | null })[]
    return rows.map(entryOf)
  }

  lesson(phrase: string): WakeLesson {
    const rows = this.#features.all(phrase) as Pick<
      Row,
      'kind' | 'confirmed' | 'mark' | 'window_floats' | 'features'
    >[]
    const negatives: Float32Array[] = []
    const positives: Float32Array[] = []
    for (const r of rows) {
      const windows = windowsOf(r.features, r.window_floats)
      if (r.mark === 'not_me') negatives.push(...windows)
      else if (r.kind === 'missed' || r.confirmed === 'yes') positives.push(...windows)
    }
    return { negatives, positives }
  }
}

function entryOf(r: Omit<Row, 'features'> & { bytes: number | null }): WakeEntry {
  return {
    id: r.id,
    kind: r.kind,
    at: r.at,
    phrase: r.phrase,
    score: r.score,
    confirmed: r.confirmed,
    ...(r.said !== null && { said: r.said }),
    ...((r.local === 'agreed' || r.local === 'refused') && { local: r.local }),
    ...(r.mark !== null && isWakeMark(r.mark) && { mark: r.mark }),
    ...(r.marked_by !== null && { markedBy: r.marked_by }),
    ...(r.marked_at !== null && { markedAt: r.marked_at }),
    windows: r.bytes && r.window_floats > 0 ? r.bytes / 4 / r.window_floats : 0,
  }
}

function blobOf(windows: readonly Float32Array[]): Buffer | null {
  if (windows.length === 0) return null
  return Buffer.concat(windows.map((x) => Buffer.from(x.buffer, x.byteOffset, x.byteLength)))
}

/** The stored windows, each copied out of the row's buffer (aligned for a Float32Array). */
function windowsOf(blob: Buffer | null, floats: number): Float32Array[] {
  if (!blob || floats <= 0) return []
  const all = new Float32Array(blob.byteLength / 4)
  for (let i = 0; i < all.length; i++) all[i] = blob.readFloatLE(i * 4)
  const out: Float32Array[] = []
  for (let o = 0; o + floats <= all.length; o += floats) out.push(all.slice(o, o + floats))
  return out
}
