import { randomUUID } from 'node:crypto'
import type { ApprovalRequest } from '../../src/ports/approver.js'

/** A critical request to unlock the front door, asked now and open for a minute. */
export function doorApproval(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  const now = Date.now()
  return {
    id: `ap-${randomUUID().slice(0, 8)}`,
    tool: 'unlock_door',
    action: 'unlock the front door',
    args: { door: 'front' },
    argsDigest: '0'.repeat(64),
    channel: 'voice',
    conversationId: 'c1',
    critical: true,
    createdAt: now,
    expiresAt: now + 60_000,
    ...over,
  }
}
