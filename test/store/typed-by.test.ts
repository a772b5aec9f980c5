import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { MIGRATIONS } from '../../src/adapters/sqlite/migrations.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'nocturn-typed-by-'))
  dirs.push(d)
  return d
}

describe('who typed a message, in the store (migration 9)', () => {
  it('a store from before it keeps every message, and who typed the next one is kept', () => {
    const path = join(tmp(), 's.db')
    const db = new Database(path)
    // The store as the release before this one left it: migrations 1–8.
    for (const [i, m] of MIGRATIONS.slice(0, 8).entries()) {
      db.exec(m)
      db.pragma(`user_version = ${i + 1}`)
    }
    db.prepare(
      'INSERT INTO conversations (id, channel, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    ).run('c1', 'text', null, 1, 1)
    db.prepare(
      `INSERT INTO messages (conversation_id, seq, role, channel, text, created_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ).run('c1', 1, 'user', 'text', 'Is the back door locked?', 1)
    db.close()
    const s = new SqliteStore(path)
    s.append('c1', { role: 'user', text: 'Lock it', channel: 'text', at: 2, by: 'ben' })
    s.append('c1', { role: 'user', text: 'Thanks', channel: 'voice', at: 3 })
    s.close()
    const again = new SqliteStore(path)
    expect(again.messages('c1')).toEqual([
      {
        seq: 1,
        conversationId: 'c1',
        role: 'user',
        text: 'Is the back door locked?',
        channel: 'text',
        at: 1,
      },
      {
        seq: 2,
        conversationId: 'c1',
        role: 'user',
        text: 'Lock it',
        channel: 'text',
        at: 2,
        by: 'ben',
      },
      { seq: 3, conversationId: 'c1', role: 'user', text: 'Thanks', channel: 'voice', at: 3 },
    ])
    again.close()
  })

  it('who typed in a conversation: each phone once, in the order each first typed, at most the limit asked, none from rows without it', () => {
    const s = new SqliteStore(':memory:')
    const c = s.createConversation({ channel: 'voice', at: 1 })
    const other = s.createConversation({ channel: 'text', at: 1 })
    s.append(c.id, { role: 'user', text: 'Hello', channel: 'voice', at: 2 })
    s.append(c.id, { role: 'user', text: 'Old phone', channel: 'text', at: 3 })
    for (const [i, by] of ['carl', 'anna', 'carl', 'ben', 'dora'].entries()) {
      s.append(c.id, { role: 'user', text: `from ${by}`, channel: 'text', at: 4 + i, by })
    }
    s.append(other.id, { role: 'user', text: 'Elsewhere', channel: 'text', at: 9, by: 'erik' })
    expect(s.typedBy(c.id, 10)).toEqual(['carl', 'anna', 'ben', 'dora'])
    expect(s.typedBy(c.id, 2)).toEqual(['carl', 'anna'])
    expect(s.typedBy(other.id, 10)).toEqual(['erik'])
    expect(s.typedBy('no-such-conversation', 10)).toEqual([])
    s.close()
  })
})
