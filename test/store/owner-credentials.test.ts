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
  const d = mkdtempSync(join(tmpdir(), 'nocturn-owners-'))
  dirs.push(d)
  return d
}

const credential = {
  phone: 'anna',
  id: 'Y3JlZC0x',
  publicKey: new Uint8Array([0xa5, 1, 2, 3, 0x26]),
  counter: 3,
  keyTag: 'tag-1',
  createdAt: 1764489600000,
}

describe('the owner credentials in the store (migration 8)', () => {
  it('a store from before the owner credentials gains the table and keeps what it held', () => {
    const path = join(tmp(), 's.db')
    const db = new Database(path)
    // The store as the release before this one left it: migrations 1–7.
    for (const [i, m] of MIGRATIONS.slice(0, 7).entries()) {
      db.exec(m)
      db.pragma(`user_version = ${i + 1}`)
    }
    db.prepare(
      'INSERT INTO push_subscriptions (endpoint, phone, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?)',
    ).run('https://push.example.net/s/1', 'anna', 'p', 'a', 1)
    db.close()
    const s = new SqliteStore(path)
    expect(s.push.pushSubscriptions('anna').map((p) => p.endpoint)).toEqual([
      'https://push.example.net/s/1',
    ])
    expect(s.owners.ownerPhones()).toEqual([])
    s.owners.putOwnerCredential(credential)
    s.close()
    const again = new SqliteStore(path)
    expect(again.owners.ownerCredential('anna')).toEqual(credential)
    again.close()
    const check = new Database(path, { readonly: true })
    expect(check.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length)
    check.close()
  })

  it('moves the counter only forward, one credential per phone, and forgets a phone', () => {
    const s = new SqliteStore(':memory:')
    s.owners.putOwnerCredential(credential)
    expect(s.owners.advanceOwnerCounter('anna', credential.id, 3)).toBe(false)
    expect(s.owners.advanceOwnerCounter('anna', 'another-id', 9)).toBe(false)
    expect(s.owners.advanceOwnerCounter('anna', credential.id, 4)).toBe(true)
    expect(s.owners.ownerCredential('anna')?.counter).toBe(4)
    s.owners.putOwnerCredential({ ...credential, id: 'Y3JlZC0y', counter: 0 })
    expect(s.owners.ownerCredential('anna')).toMatchObject({ id: 'Y3JlZC0y', counter: 0 })
    expect(s.owners.removeOwnerCredential('anna')).toBe(true)
    expect(s.owners.removeOwnerCredential('anna')).toBe(false)
    expect(s.owners.ownerCredential('anna')).toBeUndefined()
    s.close()
  })
})
