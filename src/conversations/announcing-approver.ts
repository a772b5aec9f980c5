import type { ApprovalDecision, ApprovalRequest, Approver } from '../ports/approver.js'
import type { ApprovalEvent, TranscriptFeed } from './transcript-feed.js'

/**
 * An Approver decorator that tells the feed when an approval is asked for and how it ended, so a
 * phone following the conversation sees "waiting for Anna's phone" as it happens. Wrap the real
 * approver with it and give the result to the gate.
 */
export function announcingApprover(inner: Approver, feed: TranscriptFeed): Approver {
  const announce = (r: ApprovalRequest, state: ApprovalEvent['state'], by?: string) =>
    feed.announceApproval({
      conversationId: r.conversationId,
      approvalId: r.id,
      tool: r.tool,
      action: r.action,
      critical: r.critical,
      channel: r.channel,
      state,
      ...(by !== undefined && { by }),
    })
  return {
    get audience() {
      return inner.audience
    },
    unavailable: () => inner.unavailable?.(),
    async request(r: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
      announce(r, 'pending')
      try {
        const d = await inner.request(r, signal)
        announce(r, d.decision === 'approve' ? 'approved' : 'denied', d.by)
        return d
      } catch (err) {
        announce(r, 'ended')
        throw err
      }
    },
  }
}
