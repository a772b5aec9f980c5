import { NocturnError } from '../core/errors.js'
import type { Grants } from '../core/grants.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import type { Grant } from '../ports/grant-store.js'
import type { GrantSummary } from '../protocol/grant-ops.js'

/**
 * What a paired phone may do with the remembered yeses (docs/protocol.md "Grants"): see every
 * grant in force and revoke any of them. Any paired phone may revoke any grant: a household takes
 * back a yes without asking who gave it.
 */
export class PhoneGrants {
  readonly #grants: Grants
  readonly #clock: Clock
  readonly #log: Logger

  constructor(deps: { grants: Grants; clock: Clock; logger: Logger }) {
    this.#grants = deps.grants
    this.#clock = deps.clock
    this.#log = deps.logger
  }

  /** The grants in force (not revoked, not past their time), oldest first. */
  list(): GrantSummary[] {
    const now = this.#clock.now()
    return this.#grants
      .list()
      .filter((g) => g.revokedAt === null && !(g.expiry.kind === 'until' && g.expiry.at <= now))
      .map(grantSummary)
  }

  revoke(id: string, phone: string): void {
    if (!this.#grants.revoke(id, this.#clock.now())) {
      throw new NocturnError('NOC_ERR_NOT_FOUND', 'There is no such grant in force on this device.')
    }
    this.#log.info({ event: 'grant_revoked', grantId: id, phone }, 'grant revoked from phone')
  }
}

function grantSummary(g: Grant): GrantSummary {
  return {
    id: g.id,
    tool: g.tool,
    channel: g.channel,
    ...(g.scope.kind === 'exact'
      ? { scope: 'exact', ...(g.scope.args !== undefined && { args: g.scope.args }) }
      : { scope: 'pattern', pattern: { ...g.scope.pattern } }),
    ...(g.expiry.kind === 'session'
      ? { expiry: 'conversation', conversation: g.expiry.conversationId }
      : { expiry: 'until', until: g.expiry.at }),
    createdAt: g.createdAt,
    by: g.createdBy.id,
  }
}
