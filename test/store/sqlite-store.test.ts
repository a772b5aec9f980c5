import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { MIGRATIONS } from '../../src/adapters/sqlite/migrations.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { grantTraverse } from '../helpers/system.js'

const tmp = () => mkdtempSync(join(tmpdir(), 'nocturn-store-'))

describe('SqliteStore', () => {
  it('keeps messages of every role in order, and they survive reopening', () => {
    const path = join(tmp(), 's.db')
    const a = new SqliteStore(path)
    const conv = a.createConversation({ channel: 'voice', title: 'Door', at: 10 })
    a.append(conv.id, { role: 'user', text: 'Unlock the door', channel: 'voice', at: 11 })
    a.append(conv.id, {
      role: 'assistant',
      text: '',
      toolCalls: [{ id: 'c1', name: 'unlock_door', args: { door: 'front' } }],
      channel: 'voice',
      at: 12,
    })
    a.append(conv.id, {
      role: 'tool',
      toolCallId: 'c1',
      toolName: 'unlock_door',
      args: { door: 'front' },
      outcome: { ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN', error: 'no' },
      channel: 'voice',
      at: 13,
    })
    a.close()
    const b = new SqliteStore(path)
    expect(b.getConversation(conv.id)).toEqual({ ...conv, updatedAt: 13 })
    expect(b.messages(conv.id)).toEqual([
      {
        seq: 1,
        conversationId: conv.id,
        role: 'user',
        text: 'Unlock the door',
        channel: 'voice',
        at: 11,
      },
      {
        seq: 2,
        conversationId: conv.id,
        role: 'assistant',
        text: '',
        toolCalls: [{ id: 'c1', name: 'unlock_door', args: { door: 'front' } }],
        channel: 'voice',
        at: 12,
      },
      {
        seq: 3,
        conversationId: conv.id,
        role: 'tool',
        toolCallId: 'c1',
        toolName: 'unlock_door',
        args: { door: 'front' },
        outcome: { ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN', error: 'no' },
        channel: 'voice',
        at: 13,
      },
    ])
    expect(b.messages(conv.id, { afterSeq: 1, limit: 1 }).map((m) => m.seq)).toEqual([2])
    b.close()
  })

  it('lists conversations newest activity first, paged', () => {
    const s = new SqliteStore(':memory:')
    const c1 = s.createConversation({ channel: 'voice', at: 1 })
    const c2 = s.createConversation({ channel: 'text', at: 2 })
    s.append(c1.id, { role: 'user', text: 'later', channel: 'voice', at: 5 })
    expect(s.listConversations().map((c) => c.id)).toEqual([c1.id, c2.id])
    expect(s.listConversations({ before: 5 }).map((c) => c.id)).toEqual([c2.id])
  })

  it('pages by (last activity, id): conversations sharing a time are neither skipped nor repeated at a page boundary', () => {
    const s = new SqliteStore(':memory:')
    // Five conversations touched in the same millisecond (one spoken session's writes, a restore),
    // between a newer and an older one; pages of two split the five.
    const newest = s.createConversation({ channel: 'text', at: 300 })
    const tied = Array.from({ length: 5 }, () =>
      s.createConversation({ channel: 'voice', at: 200 }),
    )
    const oldest = s.createConversation({ channel: 'text', at: 100 })
    const all = s.listConversations({ limit: 50 }).map((c) => c.id)
    expect(all).toEqual([newest.id, ...tied.map((c) => c.id).sort(), oldest.id])
    const walked: string[] = []
    let page = s.listConversations({ limit: 2 })
    while (page.length > 0) {
      walked.push(...page.map((c) => c.id))
      const last = page.at(-1) as (typeof page)[number]
      page = s.listConversations({ limit: 2, before: last.updatedAt, beforeId: last.id })
    }
    expect(walked).toEqual(all)
    // `before` alone keeps its meaning: strictly older activity.
    expect(s.listConversations({ before: 200 }).map((c) => c.id)).toEqual([oldest.id])
  })

  it('refuses a message for an unknown conversation', () => {
    const s = new SqliteStore(':memory:')
    expect(() => s.append('nope', { role: 'user', text: 'x', channel: 'text', at: 1 })).toThrow(
      /no conversation with id nope/,
    )
  })

  it('uses WAL and records its schema version', () => {
    const path = join(tmp(), 's.db')
    new SqliteStore(path).close()
    const db = new Database(path, { readonly: true })
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length)
    db.close()
  })

  it('a file that is not a database: clear error, and the file is left untouched', () => {
    const path = join(tmp(), 'notes.db')
    const content = 'shopping list: milk, eggs\n'.repeat(200)
    writeFileSync(path, content)
    expect(() => new SqliteStore(path)).toThrow(/notes\.db is not a Nocturn database/)
    expect(readFileSync(path, 'utf8')).toBe(content)
  })

  it('a database from a newer Nocturn is refused, not downgraded', () => {
    const path = join(tmp(), 's.db')
    new SqliteStore(path).close()
    const db = new Database(path)
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`)
    db.close()
    expect(() => new SqliteStore(path)).toThrow(/written by a newer Nocturn/)
  })

  it('a read-only store: clear error naming the file, and its messages are still there', () => {
    const dir = tmp()
    const path = join(dir, 's.db')
    const s = new SqliteStore(path)
    const conv = s.createConversation({ channel: 'text', at: 1 })
    s.append(conv.id, { role: 'user', text: 'keep me', channel: 'text', at: 1 })
    s.close()
    chmodSync(path, 0o444)
    chmodSync(dir, 0o555)
    // Root ignores file modes, so open it as an unprivileged user when we are root.
    const asNobody = process.getuid?.() === 0
    if (asNobody) chownSync(dir, 65534, 65534)
    // That user must reach the project's code: a clone under a private (0700) temporary folder
    // needs traverse permission on its ancestors for the length of the probe.
    if (asNobody) grantTraverse(join(import.meta.dirname, '../..'))
    const probe = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('${join(import.meta.dirname, '../../src/adapters/sqlite/sqlite-store.ts')}').then(m => { try { new m.SqliteStore(${JSON.stringify(path)}); console.log('opened') } catch (e) { console.log(e.code + ' ' + e.message) } })`,
      ],
      {
        encoding: 'utf8',
        cwd: join(import.meta.dirname, '../..'),
        ...(asNobody ? { uid: 65534, gid: 65534 } : {}),
      },
    )
    expect(probe.stdout + probe.stderr).toMatch(
      /^NOC_ERR_STORE_READ_ONLY cannot write the store at .*s\.db/,
    )
    if (asNobody) chownSync(dir, 0, 0)
    chmodSync(dir, 0o755)
    const again = new SqliteStore(path)
    expect(again.messages(conv.id).map((m) => m.role === 'user' && m.text)).toEqual(['keep me'])
    again.close()
  })
})

describe('SqliteStore retention', () => {
  function seeded() {
    const path = join(tmp(), 's.db')
    const s = new SqliteStore(path)
    const ids = [1, 2, 3, 4].map((day) => {
      const c = s.createConversation({ channel: 'voice', at: day * 86_400_000 })
      s.append(c.id, {
        role: 'user',
        text: `secret plan number ${day}`,
        channel: 'voice',
        at: day * 86_400_000,
      })
      return c.id
    })
    return { path, s, ids }
  }

  it('deletes a conversation and its messages, and vacuum removes them from the file', () => {
    const { path, s, ids } = seeded()
    expect(s.deleteConversation(ids[0]!)).toBe(true)
    expect(s.deleteConversation(ids[0]!)).toBe(false)
    expect(s.getConversation(ids[0]!)).toBeUndefined()
    expect(s.messages(ids[0]!)).toEqual([])
    s.vacuum()
    const bytes = readFileSync(path).toString('latin1')
    expect(bytes).not.toContain('secret plan number 1')
    expect(bytes).toContain('secret plan number 2')
    s.close()
  })

  it('prunes by age and by count, keeping the newest', () => {
    const { s, ids } = seeded()
    expect(s.prune({ before: 2 * 86_400_000 })).toBe(1)
    expect(s.prune({ keep: 2 })).toBe(1)
    expect(s.listConversations().map((c) => c.id)).toEqual([ids[3], ids[2]])
    expect(s.messages(ids[2]!)).toHaveLength(1)
    s.close()
  })
})
