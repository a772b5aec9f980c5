import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { Gate } from '../../src/core/gate.js'
import { Grants } from '../../src/core/grants.js'
import { silentLogger } from '../../src/core/logger.js'
import type { PolicyTable } from '../../src/core/policy.js'
import type { CallContext, Channel, PendingNotice } from '../../src/core/types.js'
import type { CoveredCall } from '../../src/ports/approval-listener.js'
import type { Approver } from '../../src/ports/approver.js'
import { ManualApprover } from '../../src/testing/approvers.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

export interface CoreFixture {
  clock: VirtualClock
  store: SqliteStore
  grants: Grants
  approver: ManualApprover
  gate: Gate
  pending: PendingNotice[]
  /** What the gate said a grant allowed without asking. */
  covered: CoveredCall[]
  ctx(over?: Partial<CallContext> & { channel?: Channel }): CallContext
}

/** A gate over a real in-memory SQLite store, a hand-answered approver and a virtual clock. */
export function coreFixture(
  opts: { policies?: PolicyTable | undefined; approver?: Approver; timeoutMs?: number } = {},
): CoreFixture {
  const clock = new VirtualClock()
  const store = new SqliteStore(':memory:')
  const grants = new Grants(store)
  const approver = new ManualApprover()
  const covered: CoveredCall[] = []
  const gate = new Gate({
    policies: opts.policies ?? {},
    approver: opts.approver ?? approver,
    grants,
    clock,
    approvalTimeoutMs: opts.timeoutMs ?? 60_000,
    onCovered: (c) => covered.push(c),
  })
  const pending: PendingNotice[] = []
  return {
    clock,
    store,
    grants,
    approver,
    gate,
    pending,
    covered,
    ctx: (over = {}) => ({
      signal: new AbortController().signal,
      channel: 'voice',
      conversationId: 'conv-1',
      callId: 'call-1',
      gate,
      logger: silentLogger,
      onPending: (n) => pending.push(n),
      ...over,
    }),
  }
}
