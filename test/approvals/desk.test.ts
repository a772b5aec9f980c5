import { describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { askingWire } from '../../src/approvals/asking-wire.js'
import { ApprovalDesk } from '../../src/approvals/desk.js'
import { NocturnError } from '../../src/core/errors.js'
import { Gate } from '../../src/core/gate.js'
import { Grants } from '../../src/core/grants.js'
import { silentLogger } from '../../src/core/logger.js'
import type { CallContext, Tool } from '../../src/core/types.js'
import type { ApprovalEnded } from '../../src/ports/approval-listener.js'
import type {
  ApprovalCounter,
  ApprovalWire,
  Sent,
  WireEnding,
} from '../../src/ports/approval-wire.js'
import type { ApprovalRequest } from '../../src/ports/approver.js'
import type { OwnerCheck, OwnerVerdict } from '../../src/ports/owner-check.js'
import { ManualApprover } from '../../src/testing/approvers.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

const TIMEOUT_MS = 60_000

/** A wire that sends nothing: it keeps what it was asked to send and to end. */
class FakeWire implements ApprovalWire {
  readonly audience = 'your phones'
  desk!: ApprovalCounter
  down: string | undefined
  refuse: Error | undefined
  /** While set, a request is out (`sent` has it) but `send` has not returned. */
  hold: Promise<void> | undefined
  readonly sent: ApprovalRequest[] = []
  readonly ended: WireEnding[] = []
  unavailable() {
    return this.down
  }
  answerTo(desk: ApprovalCounter) {
    this.desk = desk
  }
  async send(request: ApprovalRequest): Promise<Sent> {
    if (this.refuse) throw this.refuse
    this.sent.push(request)
    await this.hold
    return { topic: `t/${request.id}`, message: request.action, phones: ['anna'], digest: 'dg' }
  }
  end(ending: WireEnding): Sent {
    this.ended.push(ending)
    return {
      topic: `o/${ending.request.id}`,
      message: ending.state,
      phones: ['anna'],
      digest: 'dg',
    }
  }
  /** The id of the n-th request sent. */
  id(n = 0): string {
    const r = this.sent[n]
    if (!r) throw new Error(`no request ${n} sent`)
    return r.id
  }
}

const door = (critical = false): Tool => ({
  name: 'unlock_door',
  description: 'Unlocks a door',
  parameters: { type: 'object', properties: {} },
  critical,
  describe: () => 'unlock the front door',
  call: async () => ({ ok: true }),
})

/** A desk over a fake wire, asked by a real gate; one virtual clock moves them both. */
function deskWorld(o: { owner?: OwnerCheck; wire?: ApprovalWire } = {}) {
  const clock = new VirtualClock()
  const wire = new FakeWire()
  const desk = new ApprovalDesk({
    wire: o.wire ?? wire,
    clock,
    logger: silentLogger,
    ...(o.owner && { owner: o.owner }),
  })
  const told: string[] = []
  const endings: ApprovalEnded[] = []
  desk.listen({
    asked: (r) => told.push(`asked ${r.tool}`),
    sent: (_r, s) => told.push(`sent ${s.topic}`),
    ended: (e) => {
      told.push(`ended ${e.state}`)
      endings.push(e)
    },
  })
  const store = new SqliteStore(':memory:')
  const grants = new Grants(store)
  const gate = new Gate({
    policies: {},
    approver: desk,
    grants,
    clock,
    approvalTimeoutMs: TIMEOUT_MS,
  })
  const call = (over: Partial<CallContext> = {}, critical = false) => {
    const done = gate.check(
      door(critical),
      {},
      {
        signal: new AbortController().signal,
        channel: 'voice',
        conversationId: 'c1',
        callId: 'call-1',
        gate,
        logger: silentLogger,
        onPending: () => {},
        ...over,
      },
    )
    done.catch(() => {})
    return done
  }
  return { clock, wire, desk, told, endings, grants, call }
}

/** A request asked without a gate, at `now`, for `forMs`. */
const asking = (id: string, now: number, forMs: number): ApprovalRequest => ({
  id,
  tool: 't',
  action: 'a',
  args: {},
  argsDigest: 'd',
  channel: 'voice',
  conversationId: 'c',
  critical: false,
  createdAt: now,
  expiresAt: now + forMs,
})

const yes = (phone = 'anna', grant?: 'session') =>
  ({ decision: 'approve', phone, ...(grant && { grant }) }) as const

describe('the approval desk (src/approvals/desk.ts), on the virtual clock', () => {
  it('asked, sent, approved: the gate goes ahead, the wire ends it, every listener is told in order', async () => {
    const w = deskWorld()
    const done = w.call()
    await w.clock.advance(0)
    expect(w.desk.lookup(w.wire.id())).toMatchObject({ pending: true })
    expect(await w.desk.answer(w.wire.id(), yes('anna', 'session'))).toEqual({ ok: true })
    await expect(done).resolves.toBeUndefined()
    expect(w.told).toEqual([`asked unlock_door`, `sent t/${w.wire.id()}`, 'ended approved'])
    expect(w.wire.ended).toMatchObject([{ state: 'approved', by: 'anna', grant: 'session' }])
    expect(w.endings[0]).toMatchObject({
      by: 'anna',
      grant: 'session',
      outcome: { message: 'approved' },
    })
    expect(w.desk.lookup(w.wire.id())).toEqual({
      pending: false,
      refusal: 'already-settled',
      state: 'approved',
    })
  })

  it('denied: the gate refuses, the ending says who', async () => {
    const w = deskWorld()
    const done = w.call()
    await w.clock.advance(0)
    await w.desk.answer(w.wire.id(), { decision: 'deny', phone: 'ben' })
    await expect(done).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
    expect(w.endings).toMatchObject([{ state: 'denied', by: 'ben' }])
  })

  it('a critical yes is remembered once only, whatever the phone asked', async () => {
    const w = deskWorld()
    const done = w.call({}, true)
    await w.clock.advance(0)
    await w.desk.answer(w.wire.id(), yes('anna', 'session'))
    await done
    expect(w.wire.ended[0]?.grant).toBe('once')
  })

  it('a yes at the expiry edge: a millisecond before counts; at the deadline it expired, and a late yes is refused as expired', async () => {
    const early = deskWorld()
    const first = early.call()
    await early.clock.advance(TIMEOUT_MS - 1)
    expect(await early.desk.answer(early.wire.id(), yes())).toEqual({ ok: true })
    await expect(first).resolves.toBeUndefined()

    const late = deskWorld()
    const second = late.call()
    await late.clock.advance(TIMEOUT_MS)
    await expect(second).rejects.toMatchObject({ code: 'NOC_ERR_APPROVAL_TIMEOUT' })
    expect(late.endings).toMatchObject([{ state: 'expired' }])
    expect(await late.desk.answer(late.wire.id(), yes())).toMatchObject({
      ok: false,
      reason: 'expired',
    })
    expect(late.wire.ended).toHaveLength(1)
  })

  it('an abort at or after expiresAt is an expiry even without the timeout reason (a clock that jumped)', async () => {
    const w = deskWorld()
    const ac = new AbortController()
    const asked = w.desk.request(asking('r1', w.clock.now(), 10), ac.signal)
    asked.catch(() => {})
    await w.clock.advance(10)
    ac.abort(new Error('settled'))
    await expect(asked).rejects.toMatchObject({ code: 'NOC_ERR_APPROVAL_TIMEOUT' })
    expect(w.endings).toMatchObject([{ state: 'expired' }])
  })

  it('withdrawn: the call is withdrawn, the phones are told, a later yes grants nothing', async () => {
    const w = deskWorld()
    const ac = new AbortController()
    const done = w.call({ signal: ac.signal })
    await w.clock.advance(0)
    ac.abort()
    await expect(done).rejects.toMatchObject({ code: 'NOC_ERR_CANCELLED' })
    expect(w.endings).toMatchObject([{ state: 'withdrawn' }])
    expect(await w.desk.answer(w.wire.id(), yes())).toMatchObject({ reason: 'withdrawn' })
    expect(w.grants.list()).toEqual([])
  })

  it('a withdrawal while a yes is in flight (the owner check still running): nothing is taken', async () => {
    let finish!: (v: OwnerVerdict) => void
    const owner: OwnerCheck = {
      checkYes: () => new Promise((resolve) => (finish = resolve)),
      status: () => ({ registered: false }) as never,
      register: async () => ({ credentialId: 'x' }),
    }
    const w = deskWorld({ owner })
    const ac = new AbortController()
    const done = w.call({ signal: ac.signal }, true)
    await w.clock.advance(0)
    const verdict = w.desk.answer(w.wire.id(), yes())
    ac.abort()
    finish({ ok: true, owner: true })
    await expect(verdict).resolves.toMatchObject({ ok: false, reason: 'withdrawn' })
    await expect(done).rejects.toMatchObject({ code: 'NOC_ERR_CANCELLED' })
    expect(w.wire.ended.map((e) => e.state)).toEqual(['withdrawn'])
  })

  it("a yes that fails the owner's check is refused with what to tell the phone; the approval stays pending", async () => {
    const owner: OwnerCheck = {
      checkYes: async () => ({ ok: false, reason: 'not-user-verified' }),
      status: () => ({ registered: false }) as never,
      register: async () => ({ credentialId: 'x' }),
    }
    const w = deskWorld({ owner })
    const done = w.call({}, true)
    await w.clock.advance(0)
    expect(await w.desk.answer(w.wire.id(), yes())).toMatchObject({
      ok: false,
      reason: 'not-user-verified',
      tell: 'not-user-verified',
    })
    expect(w.desk.lookup(w.wire.id())).toMatchObject({ pending: true })
    // A no needs no owner.
    await w.desk.answer(w.wire.id(), { decision: 'deny', phone: 'anna' })
    await expect(done).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
  })

  it('the same approval answered twice (two connections, two phones): the first wins, the second is refused as settled', async () => {
    const w = deskWorld()
    const done = w.call()
    await w.clock.advance(0)
    const [a, b] = await Promise.all([
      w.desk.answer(w.wire.id(), yes('anna')),
      w.desk.answer(w.wire.id(), { decision: 'deny', phone: 'ben' }),
    ])
    expect(a).toEqual({ ok: true })
    expect(b).toMatchObject({ ok: false, reason: 'already-settled', fields: { state: 'approved' } })
    await expect(done).resolves.toBeUndefined()
    expect(w.wire.ended).toHaveLength(1)
  })

  it('the same request asked twice is refused while the first is pending', async () => {
    const w = deskWorld()
    const ac = new AbortController()
    const r = (id: string) => asking(id, w.clock.now(), TIMEOUT_MS)
    const first = w.desk.request(r('same'), ac.signal)
    first.catch(() => {})
    await expect(w.desk.request(r('same'), ac.signal)).rejects.toThrow('already pending')
    ac.abort()
    await expect(first).rejects.toMatchObject({ code: 'NOC_ERR_CANCELLED' })
  })

  it('the asking phone may not approve its own critical call; another phone may', async () => {
    const w = deskWorld()
    const done = w.call({ channel: 'text', askedBy: 'anna' }, true)
    await w.clock.advance(0)
    expect(await w.desk.answer(w.wire.id(), yes('anna'))).toMatchObject({
      reason: 'self-approval',
      fields: { critical: true, rule: 'non-critical' },
    })
    expect(await w.desk.answer(w.wire.id(), yes('ben'))).toEqual({ ok: true })
    await expect(done).resolves.toBeUndefined()
  })

  it('a request that cannot go out fails at once: nobody was asked, nothing to end on the wire', async () => {
    const w = deskWorld()
    w.wire.refuse = new NocturnError('NOC_ERR_APPROVER_UNREACHABLE', 'no broker')
    await expect(w.call()).rejects.toMatchObject({ code: 'NOC_ERR_APPROVER_UNREACHABLE' })
    expect(w.told).toEqual(['asked unlock_door', 'ended failed'])
    expect(w.wire.ended).toEqual([])
  })

  it('a request the broker refuses after it went out fails now, with the wire told nothing more', async () => {
    const w = deskWorld()
    const done = w.call()
    await w.clock.advance(0)
    w.wire.desk.fail(w.wire.id(), new Error('refused by the broker'))
    await expect(done).rejects.toMatchObject({ code: 'NOC_ERR_APPROVER_UNREACHABLE' })
    expect(w.told.at(-1)).toBe('ended failed')
    expect(w.wire.ended).toEqual([])
    expect(await w.desk.answer(w.wire.id(), yes())).toMatchObject({ reason: 'withdrawn' })
  })

  it('withdrawAll ends every pending approval as withdrawn (the speaker stopping)', async () => {
    const w = deskWorld()
    const one = w.call({ callId: 'a' })
    const two = w.call({ callId: 'b' })
    await w.clock.advance(0)
    w.desk.withdrawAll()
    await expect(one).rejects.toMatchObject({ code: 'NOC_ERR_CANCELLED' })
    await expect(two).rejects.toMatchObject({ code: 'NOC_ERR_CANCELLED' })
    expect(w.wire.ended.map((e) => e.state)).toEqual(['withdrawn', 'withdrawn'])
    expect(w.desk.pending()).toEqual([])
  })

  it('an unknown id is refused as unknown; a listener that throws holds nothing up', async () => {
    const w = deskWorld()
    expect(await w.desk.answer('nope', yes())).toEqual({ ok: false, reason: 'unknown-request' })
    w.desk.listen({
      asked: () => {
        throw new Error('broken listener')
      },
    })
    const done = w.call()
    await w.clock.advance(0)
    await w.desk.answer(w.wire.id(), yes())
    await expect(done).resolves.toBeUndefined()
  })

  it('an answer that comes while the request is still going out is taken once it is pending', async () => {
    const w = deskWorld()
    let release!: () => void
    w.wire.hold = new Promise((r) => (release = r))
    const done = w.call()
    await w.clock.advance(0)
    const verdict = w.desk.answer(w.wire.id(), yes())
    release()
    await expect(verdict).resolves.toEqual({ ok: true })
    await expect(done).resolves.toBeUndefined()
  })

  it('an approver that answers at once (the terminal) is heard even before its request is pending', async () => {
    const manual = new ManualApprover()
    const w = deskWorld({ wire: askingWire(manual) })
    const done = w.call()
    // Answered in the same tick it was asked, before the desk holds it as pending.
    await Promise.resolve()
    manual.last().answer({ decision: 'approve', by: 'console' })
    await w.clock.advance(0)
    await expect(done).resolves.toBeUndefined()
    expect(w.endings).toMatchObject([{ state: 'approved', by: 'console' }])
    // Withdrawing a terminal question aborts it.
    const ac = new AbortController()
    const second = w.call({ signal: ac.signal })
    await w.clock.advance(0)
    ac.abort()
    await expect(second).rejects.toMatchObject({ code: 'NOC_ERR_CANCELLED' })
    expect(manual.last().withdrawn).toBe(true)
  })
})
