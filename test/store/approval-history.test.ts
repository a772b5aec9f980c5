import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { MIGRATIONS } from '../../src/adapters/sqlite/migrations.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { approvalRecorder } from '../../src/conversations/approval-recorder.js'
import type { ApprovalEnded } from '../../src/ports/approval-listener.js'
import type { ApprovalRequest } from '../../src/ports/approver.js'
import type { Grant } from '../../src/ports/grant-store.js'

const request = (id: string, at: number): ApprovalRequest => ({
  id,
  tool: 'set_light',
  action: 'switch on the porch light',
  args: { room: 'porch' },
  argsDigest: 'd',
  channel: 'text',
  conversationId: 'conv-1',
  critical: false,
  askedBy: 'ben',
  said: 'Can you put the porch\nlight on for the delivery?',
  createdAt: at,
  expiresAt: at + 60_000,
})

describe('the approval history (ports/approval-history.ts on SQLite)', () => {
  it('keeps every ending with its sentence and words, newest first, across a restart, and prunes with the conversations', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-history-'))
    try {
      const path = join(dir, 'n.db')
      let now = 1_764_489_600_000
      const store = new SqliteStore(path)
      const recorder = approvalRecorder(store.history)
      // How the desk ends each (src/approvals/desk.ts); the unreachable one never went out.
      const endings: Array<Pick<ApprovalEnded, 'state' | 'by' | 'grant'>> = [
        { state: 'approved', by: 'anna', grant: 'session' },
        { state: 'denied', by: 'ben' },
        { state: 'expired' },
        { state: 'withdrawn' },
        { state: 'failed' },
      ]
      for (const [i, id] of ['a1', 'a2', 'a3', 'a4', 'a5'].entries()) {
        now += 1000
        const asked = { ...request(id, now - 500), targets: ['light.porch'] }
        recorder.ended?.({ request: asked, at: now, ...endings[i]! })
      }
      store.close()
      const again = new SqliteStore(path)
      const kept = again.history.list({ limit: 10 })
      // The unreachable one asked nobody: no ending.
      expect(kept.map((e) => [e.id, e.state, e.by ?? null])).toEqual([
        ['a4', 'withdrawn', null],
        ['a3', 'expired', null],
        ['a2', 'denied', 'ben'],
        ['a1', 'approved', 'anna'],
      ])
      expect(kept[3]).toMatchObject({
        action: 'switch on the porch light',
        args: { room: 'porch' },
        askedBy: 'ben',
        // What was typed, as the phones were shown it: whitespace made one space.
        said: 'Can you put the porch light on for the delivery?',
        channel: 'text',
        grant: 'session',
        conversationId: 'conv-1',
        targets: ['light.porch'],
      })
      // Paging: after the second, the rest.
      const first = again.history.list({ limit: 2 })
      const last = first.at(-1)
      expect(
        again.history
          .list({ limit: 10, before: last?.endedAt ?? 0, beforeId: last?.id ?? '' })
          .map((e) => e.id),
      ).toEqual(['a2', 'a1'])
      // The retention's age applies to endings too.
      again.prune({ before: now - 2500 })
      expect(again.history.list({ limit: 10 }).map((e) => e.id)).toEqual(['a4', 'a3'])
      again.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('keeps a call a grant allowed (migration 10) beside the endings kept before it, across a restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-history-'))
    try {
      const path = join(dir, 'n.db')
      // The store as the release before this one left it (migrations 1–9), one ending kept.
      const db = new Database(path)
      for (const [i, m] of MIGRATIONS.slice(0, 9).entries()) {
        db.exec(m)
        db.pragma(`user_version = ${i + 1}`)
      }
      db.prepare(
        `INSERT INTO approval_history (id, tool, action, critical, channel, state, decided_by,
           asked_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run('old', 'set_light', 'switch on the hall light', 0, 'voice', 'denied', 'ben', 1, 2)
      db.close()
      const store = new SqliteStore(path)
      const grant: Grant = {
        id: 'g1',
        tool: 'set_light',
        channel: 'text',
        scope: { kind: 'exact', argsDigest: 'd', args: { room: 'porch' } },
        expiry: { kind: 'until', at: 9_000 },
        createdBy: { kind: 'phone', id: 'anna' },
        createdAt: 3_000,
        revokedAt: null,
      }
      const { id: _i, argsDigest: _d, createdAt: _c, expiresAt: _e, ...call } = request('x', 0)
      approvalRecorder(store.history).covered?.('c1', {
        ...call,
        targets: ['light.porch'],
        grant,
        at: 5_000,
      })
      store.close()
      const again = new SqliteStore(path)
      expect(again.history.list({ limit: 10 })).toEqual([
        {
          id: 'c1',
          tool: 'set_light',
          action: 'switch on the porch light',
          args: { room: 'porch' },
          critical: false,
          channel: 'text',
          conversationId: 'conv-1',
          askedBy: 'ben',
          said: 'Can you put the porch light on for the delivery?',
          targets: ['light.porch'],
          state: 'approved',
          by: 'anna',
          coveredBy: { grant: 'g1', by: 'anna', createdAt: 3_000, expiry: 'until', until: 9_000 },
          askedAt: 5_000,
          endedAt: 5_000,
        },
        {
          id: 'old',
          tool: 'set_light',
          action: 'switch on the hall light',
          critical: false,
          channel: 'voice',
          state: 'denied',
          by: 'ben',
          args: undefined,
          askedAt: 1,
          endedAt: 2,
        },
      ])
      again.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
