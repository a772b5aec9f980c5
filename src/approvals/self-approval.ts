import type { ApprovalRequest } from '../ports/approver.js'

/**
 * Whether the phone that typed a message may approve the call it led to: `non-critical` (default)
 * lets it for ordinary tools but a critical tool needs another paired phone's yes; `any` lets it
 * for every tool (a one-phone household), always as its own explicit decision; `never` always needs
 * another phone. A "no" from the asking phone is always accepted.
 */
export type SelfApproval = 'non-critical' | 'any' | 'never'

/** Whether `phone` may approve `request` under `rule`. */
export function maySelfApprove(
  rule: SelfApproval,
  request: Pick<ApprovalRequest, 'askedBy' | 'critical'>,
  phone: string,
): boolean {
  if (request.askedBy === undefined || request.askedBy !== phone) return true
  if (rule === 'any') return true
  if (rule === 'never') return false
  return !request.critical
}
