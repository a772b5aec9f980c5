import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import { ScriptedLLM } from '../../src/testing/scripted-llm.js'
import { TurnLoop } from '../../src/turn/turn-loop.js'
import { doorTool, settle, timeTool, voiceFixture } from './harness.js'

describe('voice: the session kept as an ordinary chat (docs/design.md §2.8)', () => {
  it('transcriptions become user and assistant messages in order, with calls and outcomes, and the typed turn loop continues it', async () => {
    const v = voiceFixture()
    const { conn, done } = await v.start()
    conn.user('What')
    conn.user(' time is it?')
    conn.toolCall({ id: 'c1', name: 'current_time', args: {} })
    await settle()
    conn.model('It is')
    conn.model(' noon.')
    conn.audio(400)
    conn.user('And unlock') // arrives while the reply is still transcribed: it comes after it
    conn.turnComplete()
    conn.user(' the back door.')
    conn.toolCall({ id: 'c2', name: 'unlock_door', args: { door: 'back' } })
    conn.model('I asked Anna.')
    conn.turnComplete()
    await settle()
    v.approver.last().answer({ decision: 'deny', by: 'phone-a' })
    await settle()
    conn.user('Okay, never mind.')
    await v.driver.stop()
    const summary = await done
    expect(v.chat(summary.conversationId)).toEqual([
      'user: What time is it?',
      'assistant: [current_time#c1]',
      'tool current_time#c1: ok',
      'assistant: It is noon.',
      'user: And unlock the back door.',
      'assistant: [unlock_door#c2]',
      'assistant: I asked Anna.',
      'tool unlock_door#c2: NOC_ERR_DENIED_BY_HUMAN',
      'user: Okay, never mind.',
    ])
    expect(v.store.messages(summary.conversationId).every((m) => m.channel === 'voice')).toBe(true)

    // Continued by typing: the turn loop reads the spoken session as its history.
    const llm = new ScriptedLLM([{ text: 'The back door stays locked, then.', toolCalls: [] }])
    const loop = new TurnLoop({
      llm,
      tools: new ToolSet([timeTool, doorTool([])]),
      gate: v.gate,
      store: v.store,
      persona: defaultPersona,
      clock: v.clock,
      logger: silentLogger,
    })
    const result = await loop.run({
      conversationId: summary.conversationId,
      text: 'Did the door get unlocked?',
      channel: 'text',
    })
    expect(result.text).toBe('The back door stays locked, then.')
    const history = llm.requests[0]?.history ?? []
    expect(history.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'assistant',
      'tool',
      'user',
      'user',
    ])
    expect(history.at(-1)).toMatchObject({ role: 'user', channel: 'text' })
    expect(v.chat(summary.conversationId).at(-1)).toBe(
      'assistant: The back door stays locked, then.',
    )
  })
})
