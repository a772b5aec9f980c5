import Database from 'better-sqlite3'
import { errorText, NocturnError } from '../../core/errors.js'
import { checkIntegrity, checkStoreFiles } from './integrity.js'
import { MIGRATIONS } from './migrations.js'

/**
 * Opens (creating if needed) a Nocturn database and brings its schema up to date. Refuses, with a
 * message naming the file, anything it would damage: a file that is not a database, a database
 * from a newer Nocturn, a file it may not write.
 */
export function openDatabase(path: string): Database.Database {
  checkStoreFiles(path)
  let db: Database.Database
  try {
    db = new Database(path, { fileMustExist: false })
  } catch (err) {
    throw storeError(path, err)
  }
  try {
    // WAL: readers never block the writer, and a commit is one append to the log.
    // synchronous=NORMAL: in WAL mode a commit survives a killed process (it is in the OS cache)
    // and the database is never corrupted by a power cut; only the last commits before a power cut
    // may be lost. FULL would fsync the SD card on every message, on the thread the audio runs on.
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    db.pragma('busy_timeout = 2000')
    checkIntegrity(db, path)
    migrate(db, path)
    // Fail now, not at the first message, if the file or its folder cannot be written.
    db.exec('BEGIN IMMEDIATE; ROLLBACK')
  } catch (err) {
    db.close()
    throw err instanceof NocturnError ? err : storeError(path, err)
  }
  return db
}

function migrate(db: Database.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number
  if (version > MIGRATIONS.length) {
    throw new NocturnError(
      'NOC_ERR_STORE_TOO_NEW',
      `${path} was written by a newer Nocturn (schema ${version}, this one knows ${MIGRATIONS.length}); refusing to touch it`,
    )
  }
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] as string)
      db.pragma(`user_version = ${v + 1}`)
    })()
  }
}

function storeError(path: string, err: unknown): NocturnError {
  const code = (err as { code?: string }).code ?? ''
  const detail = errorText(err)
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new NocturnError(
      'NOC_ERR_STORE_NOT_DATABASE',
      `${path} is not a Nocturn database (${detail}); it was left untouched — move it aside or set another store path`,
      { cause: err },
    )
  }
  if (
    code === 'SQLITE_READONLY' ||
    code === 'SQLITE_CANTOPEN' ||
    code.startsWith('SQLITE_READONLY')
  ) {
    return new NocturnError(
      'NOC_ERR_STORE_READ_ONLY',
      `cannot write the store at ${path} (${detail}); check that the file and its folder are writable by this user`,
      { cause: err },
    )
  }
  if (code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_WRITE') {
    return new NocturnError(
      'NOC_ERR_STORE_READ_ONLY',
      `cannot write the store at ${path}: the disk is full (${detail}); free some space on it and start again`,
      { cause: err },
    )
  }
  return new NocturnError(
    'NOC_ERR_STORE_READ_ONLY',
    `cannot open the store at ${path}: ${detail}`,
    {
      cause: err,
    },
  )
}
