import type Database from 'better-sqlite3'
import type { SettingsStore } from '../../ports/settings-store.js'

/** The device's remembered settings on the store's own database (migration 4), one row each. */
export class SqliteSettings implements SettingsStore {
  readonly #get: Database.Statement
  readonly #set: Database.Statement

  constructor(db: Database.Database) {
    this.#get = db.prepare('SELECT value FROM settings WHERE name = ?')
    this.#set = db.prepare(
      `INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
  }

  getSetting(name: string): string | undefined {
    const row = this.#get.get(name) as { value: string } | undefined
    return row?.value
  }

  setSetting(name: string, value: string, at: number): void {
    this.#set.run(name, value, at)
  }
}
