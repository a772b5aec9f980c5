import type { Grant, GrantStore, NewGrant } from '../ports/grant-store.js'
import { canonicalJson } from './canonical-json.js'
import { NocturnError } from './errors.js'
import type { Channel } from './types.js'

export interface GrantQuery {
  readonly tool: string
  readonly args: unknown
  readonly argsDigest: string
  readonly channel: Channel
  readonly conversationId: string
  readonly now: number
}

/** What a phone may ask to be remembered with its yes. */
export type AskedGrant = 'once' | 'session' | { readonly until: number }

/**
 * What the gate will actually remember for a yes: a critical tool asks every time, so for it every
 * yes counts once, whatever was asked; anything malformed also counts once. The approver tells the
 * phone this (the outcome's `grant`), so a phone learns what became of the grant it asked for.
 */
export function rememberedGrant(critical: boolean, asked: unknown): AskedGrant {
  if (critical) return 'once'
  if (asked === 'session') return 'session'
  if (
    typeof asked === 'object' &&
    asked !== null &&
    typeof (asked as { until?: unknown }).until === 'number'
  ) {
    return { until: (asked as { until: number }).until }
  }
  return 'once'
}

/**
 * Grants: a phone's yes, remembered within a narrow scope. Listable and revocable; refused when
 * they would come from speech or would let a critical tool run unasked (it asks every time).
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
    if (opts.critical) {
      throw new NocturnError(
        'NOC_ERR_GRANT_REFUSED',
        `${grant.tool} is critical: it asks every time, so no yes is remembered for it`,
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

function covers(g: Grant, q: GrantQuery): boolean {
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
