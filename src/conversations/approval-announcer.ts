import type { ApprovalListener } from '../ports/approval-listener.js'
import type { ApprovalRequest } from '../ports/approver.js'
import type { ApprovalEvent, TranscriptFeed } from './transcript-feed.js'

/**
 * Tells the feed when an approval is asked for and how it ended, so a phone following the
 * conversation sees "waiting for Anna's phone" as it happens.
 */
export function approvalAnnouncer(feed: TranscriptFeed): ApprovalListener {
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
    asked: (r) => announce(r, 'pending'),
    ended: ({ request, state, by }) =>
      state === 'approved' || state === 'denied'
        ? announce(request, state, by)
        : announce(request, 'ended'),
  }
}
