import { copyFileSync, existsSync, renameSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { newestBackup, schemaVersion, syncFile } from './backup.js'

/** Something the household should hear about its store, said once, with what was lost. */
export interface StoreNotice {
  readonly event: 'store_restored' | 'store_file_lost' | 'store_file_unrecoverable'
  readonly message: string
}

/**
 * Before opening: a store that is missing or has no tables is a new one — unless a copy of it
 * exists (only a store that held something gets one), in which case the card or someone destroyed
 * it. Then the newest copy is put in its place and the notice says from when, and that what was
 * recorded after it is lost; whatever was found is kept beside it, never deleted. A file that is
 * not a database at all is not touched here: opening refuses it (docs/store.md).
 */
export function restoreIfDestroyed(path: string, now: number): StoreNotice | undefined {
  const how = destroyedHow(path)
  if (!how) return undefined
  const copy = newestBackup(path)
  if (!copy) return undefined
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-')
  let kept: string | undefined
  for (const suffix of ['', '-wal', '-shm']) {
    if (!existsSync(path + suffix)) continue
    const aside = `${path}.destroyed-${stamp}${suffix}`
    renameSync(path + suffix, aside)
    kept ??= aside
  }
  const tmp = `${path}.restore.tmp`
  copyFileSync(copy.file, tmp)
  syncFile(tmp)
  renameSync(tmp, path)
  syncFile(dirname(path))
  return {
    event: 'store_restored',
    message: `the store at ${path} was ${how} although it had been copied before: restored from the copy made ${new Date(copy.madeAt).toISOString()} — chats, grants and timers recorded after that are lost${kept ? `; what was found is kept as ${kept}` : ''}`,
  }
}

function destroyedHow(path: string): string | undefined {
  if (!existsSync(path)) return 'missing'
  if (statSync(path).size === 0) return 'empty (0 bytes)'
  return schemaVersion(path) === 0 ? 'empty (no tables)' : undefined
}
