import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'

/** How many copies are kept: the newest, and the one before it in case the newest copied damage. */
const GENERATIONS = 2

/** The store's copies, newest first: `nocturn.db.backup`, `nocturn.db.backup.1`. */
function backupPaths(path: string): string[] {
  return Array.from({ length: GENERATIONS }, (_, g) =>
    g === 0 ? `${path}.backup` : `${path}.backup.${g}`,
  )
}

/**
 * A consistent copy of the running store made with SQLite's online backup (writes made meanwhile
 * by this connection are carried into it), then rotated in: the copy is complete on disk before it
 * replaces the newest, which becomes the one before it. A copy cut short leaves only a `.tmp`.
 */
export async function rotateBackup(db: Database.Database, path: string): Promise<void> {
  const tmp = `${path}.backup.tmp`
  rmSync(tmp, { force: true })
  await db.backup(tmp)
  syncFile(tmp)
  const paths = backupPaths(path)
  for (let g = paths.length - 1; g > 0; g--) {
    const older = paths[g - 1] as string
    if (existsSync(older)) renameSync(older, paths[g] as string)
  }
  renameSync(tmp, paths[0] as string)
  syncFile(dirname(path))
}

/** The newest copy that opens as a Nocturn store with a schema, with when it was made. */
export function newestBackup(path: string): { file: string; madeAt: number } | undefined {
  for (const file of backupPaths(path)) {
    if (!existsSync(file)) continue
    if (schemaVersion(file) > 0) return { file, madeAt: statSync(file).mtimeMs }
  }
  return undefined
}

/** `user_version` of a SQLite file (0: no Nocturn schema), or -1 when it is not a readable database. */
export function schemaVersion(file: string): number {
  let db: Database.Database | undefined
  try {
    db = new Database(file, { fileMustExist: true })
    const version = db.pragma('user_version', { simple: true }) as number
    const tables = db
      .prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'")
      .get() as {
      n: number
    }
    return tables.n > 0 ? version : 0
  } catch {
    return -1
  } finally {
    db?.close()
  }
}

export function syncFile(file: string): void {
  const fd = openSync(file, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
