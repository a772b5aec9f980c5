import { describe, expect, it } from 'vitest'
import { TurnCounter } from '../../src/voice/turn-counter.js'

describe('TurnCounter (docs/design.md §2.4)', () => {
  it('a turn starts with the first sign after the previous turn ended, not with every sign', () => {
    const t = new TurnCounter()
    expect(t.signal('user_speech')).toBe(1)
    expect(t.signal('model_output')).toBeUndefined() // the same exchange
    const callTurn = t.current
    expect(t.schedulingFor(callTurn)).toBe('INTERRUPT')
    expect(t.end()).toBe(true)
    expect(t.schedulingFor(callTurn)).toBe('INTERRUPT') // ended, but nothing new started
    expect(t.end()).toBe(false) // a duplicate turnComplete
    expect(t.signal('model_output')).toBe(2) // new model output after turnComplete
    expect(t.schedulingFor(callTurn)).toBe('WHEN_IDLE')
    expect(t.since(callTurn)).toBe(1)
  })
})
