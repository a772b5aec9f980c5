import { isNocturnError } from '../core/errors.js'
import { rememberedGrant } from '../core/grants.js'
import type { ApprovalEnding, ApprovalHistory } from '../ports/approval-history.js'
import type { ApprovalDecision, ApprovalRequest, Approver } from '../ports/approver.js'
import type { Clock } from '../ports/clock.js'
import { saidForRequest } from '../protocol/said.js'

/**
 * An Approver decorator that keeps every ending in the history (ports/approval-history.ts), for
 * any approver behind it. A request that never went out (no broker, no phone) is no ending: nobody
 * was asked, and the gate already tells the model so.
 */
export function recordingApprover(
  inner: Approver,
  history: ApprovalHistory,
  clock: Pick<Clock, 'now'>,
): Approver {
  const record = (r: ApprovalRequest, ending: Pick<ApprovalEnding, 'state' | 'by' | 'grant'>) => {
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
      endedAt: clock.now(),
      ...ending,
    })
  }
  return {
    get audience() {
      return inner.audience
    },
    unavailable: () => inner.unavailable?.(),
    async request(r: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
      let d: ApprovalDecision
      try {
        d = await inner.request(r, signal)
      } catch (err) {
        if (isNocturnError(err) && err.code === 'NOC_ERR_APPROVAL_TIMEOUT') {
          record(r, { state: 'expired' })
        } else if (isNocturnError(err) && err.code === 'NOC_ERR_CANCELLED') {
          record(r, { state: 'withdrawn' })
        }
        throw err
      }
      if (d.decision === 'approve') {
        record(r, { state: 'approved', by: d.by, grant: rememberedGrant(r.critical, d.grant) })
      } else record(r, { state: 'denied', by: d.by })
      return d
    },
  }
}
