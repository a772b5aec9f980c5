import { describe, expect, it } from 'vitest'
import { NocturnError } from '../../src/core/errors.js'
import type { LiveSession, LiveToolResponse } from '../../src/ports/live-llm.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { CallLedger } from '../../src/voice/call-ledger.js'

/** A connection's session as the port describes it: respond throws once it is not open. */
function session() {
  const sent: string[] = []
  const s = {
    open: true,
    sent,
    sendAudio: () => {},
    endAudio: () => {},
    playbackCut: () => {},
    respond: (r: LiveToolResponse) => {
      if (!s.open) throw new NocturnError('NOC_ERR_LIVE_CLOSED', 'not open')
      sent.push(`${r.id}${r.willContinue ? ' interim' : ''}`)
    },
    close: async () => {},
  }
  return s satisfies LiveSession
}

const reply = (id: string, interim = false): LiveToolResponse => ({
  id,
  name: 'unlock_door',
  response: {},
  ...(interim ? { willContinue: true } : {}),
})

function ledger() {
  return new CallLedger({ log: new MemoryLogger(), changed: () => {} })
}

describe('the call ledger: the only way a tool answer leaves', () => {
  it('one interim and one final per call; nothing for a withdrawn call or a second final', () => {
    const l = ledger()
    const s = session()
    l.opened({ n: 1, lineage: 1, session: s }, undefined)
    const a = l.issue({ n: 1, lineage: 1 }, { id: 'a', name: 'unlock_door', args: {} }, 1, 0)
    const b = l.issue({ n: 1, lineage: 1 }, { id: 'b', name: 'unlock_door', args: {} }, 1, 0)
    if (!a || !b) throw new Error('not issued')
    expect(l.issue({ n: 1, lineage: 1 }, { id: 'a', name: 'x', args: {} }, 1, 0)).toBeUndefined()
    expect(l.sendInterim(a, reply('a', true))).toBe(true)
    expect(l.sendInterim(a, reply('a', true))).toBe(false)
    expect(l.sendFinal(a, reply('a'))).toBe(true)
    expect(l.sendFinal(a, reply('a'))).toBe(false)
    expect(l.withdraw('b', 'provider')).toBe(true)
    expect(b.signal.aborted).toBe(true)
    expect(l.sendInterim(b, reply('b', true))).toBe(false)
    expect(l.sendFinal(b, reply('b'))).toBe(false)
    expect(s.sent).toEqual(['a interim', 'a'])
    expect(l.counts()).toEqual({ running: 0, answered: 1, withdrawn: 1 })
  })

  it('an answer whose connection died is kept for the resumed lineage, never sent on a fresh one', () => {
    const l = ledger()
    const first = session()
    l.opened({ n: 1, lineage: 1, session: first }, undefined)
    l.handle(1)
    const a = l.issue({ n: 1, lineage: 1 }, { id: 'a', name: 'unlock_door', args: {} }, 1, 0)
    const b = l.issue({ n: 1, lineage: 1 }, { id: 'b', name: 'unlock_door', args: {} }, 1, 0)
    if (!a || !b) throw new Error('not issued')
    first.open = false // the socket died before its close was reported
    l.sendFinal(a, reply('a'))
    l.closed({ n: 1 })
    l.sendFinal(b, reply('b'))
    const resumed = session()
    l.handle(2) // after the calls: the session it captures knows them
    l.opened({ n: 2, lineage: 1, session: resumed }, 2)
    expect(resumed.sent).toEqual(['a', 'b'])
    // The same again, but the lineage is lost: a fresh model never hears of the old calls.
    const c = l.issue({ n: 2, lineage: 1 }, { id: 'c', name: 'unlock_door', args: {} }, 2, 0)
    if (!c) throw new Error('not issued')
    l.closed({ n: 2 })
    l.lineageLost(1)
    expect(c.state).toBe('withdrawn')
    expect(l.sendFinal(c, reply('c'))).toBe(false)
    const fresh = session()
    l.opened({ n: 3, lineage: 2, session: fresh }, undefined)
    expect(fresh.sent).toEqual([])
  })

  it('a resumed session never hears of calls made after the handle it resumed from', () => {
    const l = ledger()
    l.opened({ n: 1, lineage: 1, session: session() }, undefined)
    l.handle(1)
    const old = l.issue({ n: 1, lineage: 1 }, { id: 'old', name: 'unlock_door', args: {} }, 1, 0)
    l.handle(2)
    const late = l.issue({ n: 1, lineage: 1 }, { id: 'late', name: 'unlock_door', args: {} }, 1, 0)
    if (!old || !late) throw new Error('not issued')
    l.closed({ n: 1 })
    const resumed = session()
    // Resumed from handle 2: 'old' was made before it (known there), 'late' after it (unknown).
    l.opened({ n: 2, lineage: 1, session: resumed }, 2)
    expect(late.state).toBe('withdrawn')
    expect(old.state).toBe('running')
    l.sendFinal(old, reply('old'))
    expect(resumed.sent).toEqual(['old'])
  })
})
