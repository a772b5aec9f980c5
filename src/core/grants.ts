import type { GrantStore } from '../ports/grant-store.js'
import { canonicalJson } from './canonical.js'
import type { Channel } from './context.js'
import { NocturnError } from './errors.js'

/** What a remembered yes covers: exactly these arguments, or every call matching a pattern. */
export type GrantScope =
  | { readonly kind: 'exact'; readonly argsDigest: string; readonly args?: unknown }
  | { readonly kind: 'pattern'; readonly pattern: Readonly<Record<string, unknown>> }

/** How long it lasts: this conversation, or until a time. A "once" yes is never stored. */
export type GrantExpiry =
  | { readonly kind: 'session'; readonly conversationId: string }
  | { readonly kind: 'until'; readonly at: number }

/** Who said yes. Only a human approver creates grants; speech never does. */
export interface GrantOrigin {
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

export interface GrantQuery {
  readonly tool: string
  readonly args: unknown
  readonly argsDigest: string
  readonly channel: Channel
  readonly conversationId: string
  readonly now: number
}

/**
 * Grants: a phone's yes, remembered within a narrow scope. Listable and revocable; refused when
 * they would come from speech or would let a critical tool run "until" some time unasked.
 */
export class Grants {
  readonly #store: GrantStore

  constructor(store: GrantStore) {
    this.#store = store
  }

  add(grant: NewGrant, opts: { critical: boolean }): Grant {
    if (grant.createdBy.kind === 'voice') {
      throw new NocturnError(
        'NOC_ERR_GRANT_REFUSED',
        'a grant can only come from a phone, never from speech',
      )
    }
    if (opts.critical && grant.expiry.kind === 'until') {
      throw new NocturnError(
        'NOC_ERR_GRANT_REFUSED',
        `${grant.tool} is critical: it can be approved once or for this session, never until a time`,
      )
    }
    return this.#store.addGrant(grant)
  }

  /** The first live grant covering this call, if any. */
  find(q: GrantQuery): Grant | undefined {
    return this.#store.grantsFor(q.tool).find((g) => covers(g, q))
  }

  list(): Grant[] {
    return this.#store.listGrants()
  }

  revoke(id: string, at: number): boolean {
    return this.#store.revokeGrant(id, at)
  }
}

export function covers(g: Grant, q: GrantQuery): boolean {
  if (g.revokedAt !== null || g.tool !== q.tool || g.channel !== q.channel) return false
  if (g.expiry.kind === 'session' && g.expiry.conversationId !== q.conversationId) return false
  if (g.expiry.kind === 'until' && q.now >= g.expiry.at) return false
  if (g.scope.kind === 'exact') return g.scope.argsDigest === q.argsDigest
  if (q.args === null || typeof q.args !== 'object') return false
  const args = q.args as Record<string, unknown>
  return Object.entries(g.scope.pattern).every(
    ([k, v]) => canonicalJson(args[k]) === canonicalJson(v),
  )
}
