import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { damagePage, storeWithChats } from './damage.js'

it('a store with a damaged page is refused at open, named, and kept byte for byte', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'nocturn-integrity-')), 's.db')
  storeWithChats(path)
  damagePage(path)
  const before = readFileSync(path)
  let error: { code?: string; message?: string } | undefined
  try {
    new SqliteStore(path).close()
  } catch (err) {
    error = err as typeof error
  }
  expect(error?.code).toBe('NOC_ERR_STORE_DAMAGED')
  expect(error?.message).toMatch(/s\.db is damaged .*left untouched.*\.recover/)
  expect(readFileSync(path).equals(before)).toBe(true)
})

it('a healthy store passes the check and keeps its chats', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'nocturn-integrity-')), 's.db')
  storeWithChats(path, 3)
  const s = new SqliteStore(path)
  expect(s.listConversations({ limit: 10 }).length).toBe(3)
  s.close()
})
