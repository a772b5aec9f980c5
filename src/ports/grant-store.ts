import type { Channel } from '../core/types.js'

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

// The records it keeps; `core/grants.ts` decides what they may say.
/** What a remembered yes covers: exactly these arguments, or every call matching a pattern. */
type GrantScope =
  | { readonly kind: 'exact'; readonly argsDigest: string; readonly args?: unknown }
  | { readonly kind: 'pattern'; readonly pattern: Readonly<Record<string, unknown>> }

/** How long it lasts: this conversation, or until a time. A "once" yes is never stored. */
export type GrantExpiry =
  | { readonly kind: 'session'; readonly conversationId: string }
  | { readonly kind: 'until'; readonly at: number }

/** Who said yes. Only a human approver creates grants; speech never does. */
interface GrantOrigin {
  readonly kind: 'phone' | 'console' | 'voice'
  readonly id: string
}

export interface NewGrant {
  readonly tool: string
  readonly channel: Channel
  readonly scope: GrantScope
  readonly expiry: GrantExpiry
  readonly createdBy: GrantOrigin
  readonly createdAt: number
}

export interface Grant extends NewGrant {
  readonly id: string
  readonly revokedAt: number | null
}
