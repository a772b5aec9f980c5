import type { ApprovalHistory, GrantCover } from '../ports/approval-history.js'
import type { ApprovalListener, CoveredCall } from '../ports/approval-listener.js'
import type { Grant } from '../ports/grant-store.js'
import { saidForRequest } from '../protocol/said.js'

/**
 * Keeps every ending of an approval in the history (ports/approval-history.ts), whichever wire
 * asked, and every call a remembered yes allowed without asking (approved, by the grant's phone).
 * A request that never went out (no broker, no phone) is no ending: nobody was asked, and the gate
 * already tells the model so.
 */
export function approvalRecorder(history: ApprovalHistory): ApprovalListener {
  return {
    ended({ request: r, state, by, grant, at }) {
      if (state === 'failed') return
      history.record({
        id: r.id,
        ...theCall(r),
        askedAt: r.createdAt,
        endedAt: at,
        state,
        ...(by !== undefined && { by }),
        ...(grant !== undefined && { grant }),
      })
    },
    covered(id, c) {
      history.record({
        id,
        ...theCall(c),
        // Nobody was asked: it was allowed when it ran, by whoever's yes the grant remembers.
        askedAt: c.at,
        endedAt: c.at,
        state: 'approved',
        by: c.grant.createdBy.id,
        coveredBy: cover(c.grant),
      })
    },
  }
}

/** What the history keeps of the call itself, asked about or covered by a grant alike. */
function theCall(c: Omit<CoveredCall, 'grant' | 'at'>) {
  const said = saidForRequest(c.said)
  return {
    tool: c.tool,
    action: c.action,
    args: c.args,
    critical: c.critical,
    channel: c.channel,
    ...(c.conversationId !== '' && { conversationId: c.conversationId }),
    ...(c.askedBy !== undefined && { askedBy: c.askedBy }),
    ...(said !== undefined && { said }),
    ...(c.targets !== undefined && { targets: c.targets }),
  }
}

function cover(g: Grant): GrantCover {
  return {
    grant: g.id,
    by: g.createdBy.id,
    createdAt: g.createdAt,
    expiry: g.expiry.kind === 'until' ? 'until' : 'conversation',
    ...(g.expiry.kind === 'until' && { until: g.expiry.at }),
  }
}
