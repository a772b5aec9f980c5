import type Database from 'better-sqlite3'
import type { Channel } from '../../core/types.js'
import type {
  ApprovalEnding,
  ApprovalEndingState,
  ApprovalHistory,
  GrantCover,
} from '../../ports/approval-history.js'
import type { GrantRequest } from '../../ports/approver.js'

interface EndingRow {
  id: string
  tool: string
  action: string
  args: string | null
  critical: number
  channel: Channel
  conversation_id: string | null
  asked_by: string | null
  said: string | null
  state: ApprovalEndingState
  decided_by: string | null
  grant_kept: string | null
  covered_by: string | null
  targets: string | null
  asked_at: number
  ended_at: number
}

/** The approval history on the store's own database (migrations 3, 7, 10 and 11), newest ending first. */
export class SqliteApprovalHistory implements ApprovalHistory {
  readonly #q

  constructor(db: Database.Database) {
    this.#q = {
      insert: db.prepare(
        `INSERT OR REPLACE INTO approval_history (id, tool, action, args, critical, channel,
           conversation_id, asked_by, said, state, decided_by, grant_kept, covered_by, targets,
           asked_at, ended_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      page: db.prepare(
        `SELECT * FROM approval_history WHERE ended_at < ? OR (ended_at = ? AND id > ?)
           ORDER BY ended_at DESC, id LIMIT ?`,
      ),
      pruneBefore: db.prepare('DELETE FROM approval_history WHERE ended_at < ?'),
    }
  }

  record(e: ApprovalEnding): void {
    this.#q.insert.run(
      e.id,
      e.tool,
      e.action,
      e.args === undefined ? null : JSON.stringify(e.args),
      e.critical ? 1 : 0,
      e.channel,
      e.conversationId ?? null,
      e.askedBy ?? null,
      e.said ?? null,
      e.state,
      e.by ?? null,
      e.grant === undefined ? null : JSON.stringify(e.grant),
      e.coveredBy === undefined ? null : JSON.stringify(e.coveredBy),
      e.targets === undefined ? null : JSON.stringify(e.targets),
      e.askedAt,
      e.endedAt,
    )
  }

  list(page: { limit: number; before?: number; beforeId?: string }): ApprovalEnding[] {
    const before = page.before ?? Number.MAX_SAFE_INTEGER
    const rows = this.#q.page.all(
      before,
      before,
      page.beforeId ?? '\uffff',
      page.limit,
    ) as EndingRow[]
    return rows.map(toEnding)
  }

  /** Endings older than `before` go, as the conversations do under the retention policy. */
  pruneBefore(before: number): number {
    return this.#q.pruneBefore.run(before).changes
  }
}

function toEnding(r: EndingRow): ApprovalEnding {
  return {
    id: r.id,
    tool: r.tool,
    action: r.action,
    args: r.args === null ? undefined : (JSON.parse(r.args) as unknown),
    critical: r.critical === 1,
    channel: r.channel,
    ...(r.conversation_id !== null && { conversationId: r.conversation_id }),
    ...(r.asked_by !== null && { askedBy: r.asked_by }),
    ...(r.said !== null && { said: r.said }),
    state: r.state,
    ...(r.decided_by !== null && { by: r.decided_by }),
    ...(r.grant_kept !== null && { grant: JSON.parse(r.grant_kept) as GrantRequest }),
    ...(r.covered_by !== null && { coveredBy: JSON.parse(r.covered_by) as GrantCover }),
    ...(r.targets !== null && { targets: JSON.parse(r.targets) as string[] }),
    askedAt: r.asked_at,
    endedAt: r.ended_at,
  }
}
