import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { Channel } from '../../core/types.js'
import type { Grant, GrantStore, NewGrant } from '../../ports/grant-store.js'

interface GrantRow {
  id: string
  tool: string
  channel: Channel
  scope: string
  expiry: string
  created_by: string
  created_at: number
  revoked_at: number | null
}

/** The remembered yeses on the store's own database (migration 1); a revoked grant is kept, marked. */
export class SqliteGrants implements GrantStore {
  readonly #q

  constructor(db: Database.Database) {
    this.#q = {
      insert: db.prepare(
        `INSERT INTO grants (id, tool, channel, scope, expiry, created_by, created_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
      ),
      grantsFor: db.prepare(
        'SELECT * FROM grants WHERE tool = ? AND revoked_at IS NULL ORDER BY created_at',
      ),
      list: db.prepare('SELECT * FROM grants ORDER BY created_at'),
      revoke: db.prepare('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    }
  }

  addGrant(grant: NewGrant): Grant {
    const id = randomUUID()
    this.#q.insert.run(
      id,
      grant.tool,
      grant.channel,
      JSON.stringify(grant.scope),
      JSON.stringify(grant.expiry),
      JSON.stringify(grant.createdBy),
      grant.createdAt,
    )
    return { ...grant, id, revokedAt: null }
  }

  grantsFor(tool: string): Grant[] {
    return (this.#q.grantsFor.all(tool) as GrantRow[]).map(toGrant)
  }

  listGrants(): Grant[] {
    return (this.#q.list.all() as GrantRow[]).map(toGrant)
  }

  revokeGrant(id: string, at: number): boolean {
    return this.#q.revoke.run(at, id).changes > 0
  }
}

function toGrant(r: GrantRow): Grant {
  return {
    id: r.id,
    tool: r.tool,
    channel: r.channel,
    scope: JSON.parse(r.scope),
    expiry: JSON.parse(r.expiry),
    createdBy: JSON.parse(r.created_by),
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  }
}
