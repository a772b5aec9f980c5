import { existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type Database from 'better-sqlite3'
import { newestBackup, syncFile } from './backup.js'

/** Which file the store opened: a path that names another file (or none) means it was lost. */
export interface FileIdentity {
  readonly dev: number
  readonly ino: number
  readonly wal: { readonly dev: number; readonly ino: number } | undefined
}

export function identify(path: string): FileIdentity {
  const main = statSync(path)
  const wal = statOrUndefined(`${path}-wal`)
  return { dev: main.dev, ino: main.ino, wal: wal && { dev: wal.dev, ino: wal.ino } }
}

/** How the file at `path` differs from the one opened, or undefined while it is the same. */
export function lostHow(path: string, opened: FileIdentity): string | undefined {
  const main = statOrUndefined(path)
  if (!main) return 'deleted'
  if (main.dev !== opened.dev || main.ino !== opened.ino) return 'replaced by another file'
  if (opened.wal) {
    const wal = statOrUndefined(`${path}-wal`)
    if (!wal) return 'left without its write-ahead log (deleted)'
    if (wal.dev !== opened.wal.dev || wal.ino !== opened.wal.ino)
      return 'left with another write-ahead log'
  }
  return undefined
}

/**
 * The open connection still reads and writes the file it opened, deleted or not: its image (every
 * committed write, the log's included) is written back at `path`, complete on disk before it takes
 * the name. The old connection is closed only then. A file that had taken the name (`replaced`) is
 * kept beside it, with its companions.
 * Throws, with the old connection still open, when the image cannot be written.
 */
export function writeBack(
  db: Database.Database,
  path: string,
  replaced: boolean,
  now: number,
): { aside: string | undefined } {
  const image = db.serialize()
  const tmp = `${path}.rewrite.tmp`
  writeFileSync(tmp, image)
  syncFile(tmp)
  db.close()
  let aside: string | undefined
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-')
  for (const suffix of ['', '-wal', '-shm']) {
    if (!existsSync(path + suffix)) continue
    if (replaced) {
      const to = `${path}.found-${stamp}${suffix}`
      renameSync(path + suffix, to)
      aside ??= to
    } else rmSync(path + suffix) // the closed connection's own companions: its image has them
  }
  renameSync(tmp, path)
  syncFile(dirname(path))
  return { aside }
}

/** What is said when a lost file was written back: nothing lost, and what had taken its name. */
export function writtenBack(
  path: string,
  how: string,
  aside: string | undefined,
  stopping: boolean,
): string {
  const found = stopping ? ', found as it stopped' : ''
  const kept = aside ? ` (the file found in its place is kept as ${aside})` : ''
  return `the store file at ${path} was ${how} while Nocturn ran${found}; it was written again from the open database — nothing was lost${kept}`
}

/**
 * What is said when a lost file cannot be written back: where the store is now (the image at
 * `keptAt`, or only the open connection, gone when Nocturn stops) and what the next start finds.
 */
export function notWrittenBack(
  path: string,
  how: string,
  err: string,
  keptAt: string | undefined,
  stopping: boolean,
): string {
  const copy = newestBackup(path)
  const next = copy
    ? `the next start restores the copy ${copy.file} made ${new Date(copy.madeAt).toISOString()}, and what was recorded after it is lost`
    : 'there is no copy: the next start begins an empty store'
  const start = `the store file at ${path} was ${how} while Nocturn ran and cannot be written again there (${err})`
  if (keptAt)
    return `${start}; the whole store is kept at ${keptAt} — put it at ${path} while Nocturn is stopped, or ${next}`
  const lost = stopping ? 'now that Nocturn stops' : 'when Nocturn stops'
  return `${start}: everything it holds is lost ${lost} — ${next}`
}

function statOrUndefined(file: string): { dev: number; ino: number } | undefined {
  try {
    return statSync(file)
  } catch {
    return undefined
  }
}
