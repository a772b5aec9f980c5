import type { ApprovalHistory } from '../ports/approval-history.js'
import type { ApprovalListener } from '../ports/approval-listener.js'
import { saidForRequest } from '../protocol/said.js'

/**
 * Keeps every ending of an approval in the history (ports/approval-history.ts), whichever wire
 * asked. A request that never went out (no broker, no phone) is no ending: nobody was asked, and
 * the gate already tells the model so.
 */
export function approvalRecorder(history: ApprovalHistory): ApprovalListener {
  return {
    ended({ request: r, state, by, grant, at }) {
      if (state === 'failed') return
      const said = saidForRequest(r.said)
      history.record({
        id: r.id,
        tool: r.tool,
        action: r.action,
        args: r.args,
        critical: r.critical,
        channel: r.channel,
        ...(r.conversationId !== '' && { conversationId: r.conversationId }),
        ...(r.askedBy !== undefined && { askedBy: r.askedBy }),
        ...(said !== undefined && { said }),
        askedAt: r.createdAt,
        endedAt: at,
        state,
        ...(by !== undefined && { by }),
        ...(grant !== undefined && { grant }),
      })
    },
  }
}
