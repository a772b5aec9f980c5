import type { ApprovalListener } from '../ports/approval-listener.js'

/** What of the device's state an approval moves: its count of pending approvals. */
export interface PendingApprovals {
  approval(id: string, pending: boolean): void
}

/** Counts each approval as pending in the device's state from its asking until it ends. */
export function approvalTracker(device: PendingApprovals): ApprovalListener {
  return {
    asked: (r) => device.approval(r.id, true),
    ended: ({ request }) => device.approval(request.id, false),
  }
}
