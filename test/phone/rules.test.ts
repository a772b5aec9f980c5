import { describe, expect, it } from 'vitest'
import { mayPublish, maySubscribe } from '../../src/adapters/aedes/broker.js'
import { maySelfApprove } from '../../src/approvals/self-approval.js'
import { chunkItems } from '../../src/protocol/reply-chunks.js'

const P = 'nocturn/v1'

describe('embedded broker: each phone reads only its own conversation replies', () => {
  it.each([
    [`${P}/kitchen/conversations/reply/anna`, true],
    [`${P}/kitchen/conversations/reply/ben`, false],
    [`${P}/kitchen/conversations/reply/+`, false],
    [`${P}/kitchen/conversations/#`, false],
    [`${P}/+/conversations/reply/#`, false],
    [`${P}/#`, false],
    [`${P}/kitchen/#`, false],
    [`${P}/+/+/+/anna`, true],
    [`${P}/+/+/+/+`, false],
    [`${P}/kitchen/approvals/+`, true],
    [`${P}/kitchen/status`, true],
    ['elsewhere/#', false],
  ])('anna subscribes to %s: %s', (filter, ok) => {
    expect(maySubscribe('phone', P, filter, 'anna')).toBe(ok)
  })

  it('a phone publishes only decisions and its own requests; the device anything under the prefix', () => {
    expect(mayPublish('phone', P, `${P}/kitchen/conversations/request/anna`, 'anna')).toBe(true)
    expect(mayPublish('phone', P, `${P}/kitchen/conversations/request/ben`, 'anna')).toBe(false)
    expect(mayPublish('phone', P, `${P}/kitchen/conversations/reply/anna`, 'anna')).toBe(false)
    expect(mayPublish('phone', P, `${P}/kitchen/approvals/x/decision`, 'anna')).toBe(true)
    expect(maySubscribe('device', P, `${P}/#`)).toBe(true)
  })
})

describe('who may approve a typed call', () => {
  const typed = { askedBy: 'anna', critical: false }
  const critical = { askedBy: 'anna', critical: true }
  it('another phone always may; the asker by the rule', () => {
    expect(maySelfApprove('non-critical', critical, 'ben')).toBe(true)
    expect(maySelfApprove('never', typed, 'ben')).toBe(true)
    expect(maySelfApprove('non-critical', typed, 'anna')).toBe(true)
    expect(maySelfApprove('non-critical', critical, 'anna')).toBe(false)
    expect(maySelfApprove('any', critical, 'anna')).toBe(true)
    expect(maySelfApprove('never', typed, 'anna')).toBe(false)
    // Speech has no asker: nobody is excluded.
    expect(maySelfApprove('never', { critical: true }, 'anna')).toBe(true)
  })
})

describe('reply chunks', () => {
  it('every slice fits the budget, order is kept, an oversized item is shrunk, not dropped', () => {
    const items = Array.from({ length: 500 }, (_, i) => ({ seq: i + 1, text: 'x'.repeat(100) }))
    items[10] = { seq: 11, text: 'y'.repeat(20_000) }
    const chunks = chunkItems(items, 4000, (m) => ({ seq: m.seq, truncated: true }))
    for (const c of chunks) expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(4000)
    const flat = chunks.flat() as { seq: number; truncated?: boolean }[]
    expect(flat.map((m) => m.seq)).toEqual(items.map((m) => m.seq))
    expect(flat[10]).toEqual({ seq: 11, truncated: true })
  })
})
