import { accessSync, constants, statSync } from 'node:fs'
import type Database from 'better-sqlite3'
import { errorText, NocturnError } from '../../core/errors.js'
import { newestBackup } from './backup.js'

/**
 * Before opening: the database and its WAL companions, where they exist, must be readable and
 * writable by this user. SQLite quietly opens a file it may only read in read-only mode, and WAL
 * mode lets a read-only connection start a transaction, so without this a store owned by another
 * user (left by a `sudo nocturn …` run by hand) passes every start-up step and then fails every
 * session. Nothing is created or changed here.
 */
export function checkStoreFiles(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    let owner: number
    try {
      owner = statSync(file).uid
    } catch {
      continue // not there yet: SQLite creates it, and the write probe after opening checks the folder
    }
    try {
      accessSync(file, constants.R_OK | constants.W_OK)
    } catch {
      const me = process.getuid?.()
      const whose =
        me !== undefined && owner !== me ? `owned by user ${owner}, not ${me}` : 'read-only'
      throw new NocturnError(
        'NOC_ERR_STORE_READ_ONLY',
        `cannot write the store at ${path}: ${file} is ${whose}; give it back to the user Nocturn runs as (chown) or make it writable — nothing was changed`,
      )
    }
  }
}

/**
 * SQLite's quick integrity check (page structure, no index-versus-table comparison): a damaged
 * page is found at start, not when a phone happens to read the conversation that lives there.
 * The file is kept exactly as it is; the message says how to recover (docs/store.md).
 */
export function checkIntegrity(db: Database.Database, path: string): void {
  let found: string[]
  try {
    const rows = db.pragma('quick_check(5)') as { quick_check: string }[]
    found = rows.map((r) => r.quick_check)
  } catch (err) {
    // A page so damaged that the check itself cannot read it.
    const code = (err as { code?: string }).code ?? ''
    if (code !== 'SQLITE_CORRUPT' && code !== 'SQLITE_NOTADB') throw err
    found = [errorText(err)]
  }
  if (found.length === 1 && found[0] === 'ok') return
  const copy = newestBackup(path)
  const orCopy = copy
    ? `, or put the copy ${copy.file} (made ${new Date(copy.madeAt).toISOString()}) in its place`
    : ''
  throw new NocturnError(
    'NOC_ERR_STORE_DAMAGED',
    `the store at ${path} is damaged (${found.join('; ').replace(/\s+/g, ' ').slice(0, 200)}); it was left untouched — stop Nocturn, keep a copy, and recover it with "sqlite3 ${path} .recover | sqlite3 recovered.db"${orCopy} or move it aside to start with an empty store (docs/store.md)`,
  )
}
