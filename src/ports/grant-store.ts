import type { Grant, NewGrant } from '../core/grants.js'

/**
 * GrantStore: where remembered approvals live, so a phone's "yes for this session" or "until 18:00"
 * survives a restart and stays listable and revocable.
 */
export interface GrantStore {
  addGrant(grant: NewGrant): Grant
  /** Grants for a tool that are not revoked (expired ones included; the caller checks time). */
  grantsFor(tool: string): Grant[]
  listGrants(): Grant[]
  /** Returns true when a grant was revoked. */
  revokeGrant(id: string, at: number): boolean
}
