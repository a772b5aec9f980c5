import { describe, expect, it } from 'vitest'
import type { Message } from '../../src/core/conversation.js'
import { INTERRUPTED, wellFormedHistory } from '../../src/turn/history.js'

const user = (text: string, at = 1): Message => ({ role: 'user', text, channel: 'text', at })
const model = (text: string, ...ids: string[]): Message => ({
  role: 'assistant',
  text,
  toolCalls: ids.map((id) => ({ id, name: `tool_${id}`, args: {} })),
  channel: 'voice',
  at: 2,
})
const result = (id: string): Message => ({
  role: 'tool',
  toolCallId: id,
  toolName: `tool_${id}`,
  args: {},
  outcome: { ok: true, value: 'done' },
  channel: 'voice',
  at: 3,
})

/** Every call answered exactly once after it was made; no answer without its call. */
function wellFormed(h: readonly Message[]): boolean {
  const open = new Set<string>()
  for (const m of h) {
    if (m.role === 'assistant') for (const c of m.toolCalls) open.add(c.id)
    if (m.role === 'tool' && !open.delete(m.toolCallId)) return false
  }
  return open.size === 0
}

describe('the history a model is sent', () => {
  it('a complete history is sent as stored', () => {
    const h = [user('a'), model('', 'x', 'y'), result('y'), result('x'), model('ok'), user('b')]
    expect(wellFormedHistory(h)).toEqual(h)
  })

  it('a call cut short (killed while a phone decided) gets an "interrupted" answer before the next turn', () => {
    const h = [user('unlock'), model('', 'x', 'y'), result('y'), user('did it open?')]
    const sent = wellFormedHistory(h)
    expect(wellFormed(h)).toBe(false)
    expect(wellFormed(sent)).toBe(true)
    expect(sent.slice(2, 4)).toEqual([
      expect.objectContaining({ role: 'tool', toolCallId: 'x', outcome: INTERRUPTED }),
      result('y'),
    ])
    expect(sent.at(-1)).toEqual(user('did it open?'))
  })

  it('a spoken call answered after the model spoke on keeps its real answer where it is', () => {
    const h = [user('unlock'), model('', 'x'), model('I asked Anna.'), result('x'), user('ok')]
    expect(wellFormedHistory(h)).toEqual(h)
  })

  it('an answer to a call never made is left out', () => {
    const h = [user('a'), model('hi'), result('ghost'), user('b')]
    expect(wellFormedHistory(h)).toEqual([user('a'), model('hi'), user('b')])
  })
})
