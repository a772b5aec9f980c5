import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import type { StoreNotice } from '../../src/adapters/sqlite/restore.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { until } from '../helpers/wait.js'

function freshPath(): string {
  return join(mkdtempSync(join(tmpdir(), 'nocturn-restore-')), 'nocturn.db')
}

function typed(store: SqliteStore, id: string, text: string, at: number): void {
  store.append(id, { role: 'user', text, channel: 'text', at })
}

/** A store with some chat, its upkeep running fast (every 50 ms, a copy whenever written). */
function running(path: string) {
  const store = new SqliteStore(path)
  const notices: StoreNotice[] = []
  const stop = store.startUpkeep({
    clock: realClock(),
    onNotice: (n) => notices.push(n),
    everyMs: 50,
    backupEveryMs: 0,
  })
  return { store, notices, stop }
}

describe('a store the card destroyed', () => {
  it('is restored from its copy with a notice, and what was found is kept beside it', async () => {
    const path = freshPath()
    const { store, stop } = running(path)
    const conv = store.createConversation({ channel: 'text', title: 'plans', at: 1 })
    typed(store, conv.id, 'book the dentist', 2)
    await until(() => existsSync(`${path}.backup`), 'the backup file', 60_000)
    await stop()
    store.close()
    // What the card left in the issue: a 4 KB database with no tables, its log gone.
    for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true })
    const empty = new Database(path)
    empty.pragma('journal_mode = WAL')
    empty.close()

    const after = new SqliteStore(path)
    try {
      expect(after.restored?.event).toBe('store_restored')
      expect(after.restored?.message).toMatch(
        /was empty \(no tables\) although it had been copied before: restored from the copy made \d{4}-.*recorded after that are lost; what was found is kept as .*nocturn\.db\.destroyed-/,
      )
      expect(after.messages(conv.id).map((m) => m.role === 'user' && m.text)).toEqual([
        'book the dentist',
      ])
      expect(readdirSync(join(path, '..')).some((f) => f.startsWith('nocturn.db.destroyed-'))).toBe(
        true,
      )
    } finally {
      after.close()
    }
  })

  it('a missing file with a copy is restored too; without a copy it is a new store, said nothing of', async () => {
    const path = freshPath()
    const { store, stop } = running(path)
    const conv = store.createConversation({ channel: 'text', at: 1 })
    typed(store, conv.id, 'first', 2)
    await until(() => existsSync(`${path}.backup`), 'the backup file', 60_000)
    await stop()
    store.close()
    for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true })
    const restored = new SqliteStore(path)
    expect(restored.restored?.message).toMatch(/was missing/)
    expect(restored.messages(conv.id)).toHaveLength(1)
    restored.close()

    const brandNew = new SqliteStore(freshPath())
    expect(brandNew.restored).toBeUndefined()
    expect(brandNew.listConversations()).toEqual([])
    brandNew.close()
  })

  it('keeps two copies, the newest first', async () => {
    const path = freshPath()
    const { store, stop } = running(path)
    const conv = store.createConversation({ channel: 'text', at: 1 })
    await until(() => existsSync(`${path}.backup`), 'the backup file', 60_000)
    typed(store, conv.id, 'second', 2)
    await until(() => existsSync(`${path}.backup.1`), 'the older backup file', 60_000)
    await stop()
    store.close()
    const newest = new Database(`${path}.backup`, { readonly: true })
    const count = newest.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }
    newest.close()
    expect(count.n).toBe(1)
  })
})

describe('the store file deleted or replaced under a running store', () => {
  for (const how of ['deleted', 'replaced by another file'] as const) {
    it(`${how}: found within the upkeep's interval, written back, nothing typed before or after lost`, async () => {
      const path = freshPath()
      const { store, notices, stop } = running(path)
      const conv = store.createConversation({ channel: 'text', at: 1 })
      typed(store, conv.id, 'before', 2)
      await until(() => existsSync(`${path}.backup`), 'the backup file', 60_000)
      if (how === 'deleted') rmSync(path)
      else {
        rmSync(path)
        writeFileSync(path, 'someone else’s file')
      }
      typed(store, conv.id, 'meanwhile', 3)
      await until(() => notices.length > 0, 'notices.length > 0', 60_000)
      typed(store, conv.id, 'after', 4)
      await stop()
      store.close()
      expect(notices.map((n) => n.event)).toEqual(['store_file_lost'])
      expect(notices[0]?.message).toContain(`was ${how} while Nocturn ran`)
      expect(notices[0]?.message).toContain('nothing was lost')
      if (how !== 'deleted') expect(notices[0]?.message).toMatch(/kept as .*nocturn\.db\.found-/)

      const reopened = new SqliteStore(path)
      expect(reopened.restored).toBeUndefined()
      expect(reopened.messages(conv.id).map((m) => m.role === 'user' && m.text)).toEqual([
        'before',
        'meanwhile',
        'after',
      ])
      reopened.close()
    })
  }
})
