import { describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { silentLogger } from '../../src/core/logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { TranscriptAssembler } from '../../src/voice/transcript-assembler.js'

const late = { beforeReply: true }
const call = { id: 'c1', name: 'current_time', args: {} }

/**
 * The assembler over a real in-memory store on a virtual clock; `chat()` reads what was written.
 * `lateWords`: the provider marks words late (OpenAI), the default here; false: Gemini.
 */
function world(lateWords = true) {
  const clock = new VirtualClock()
  const store = new SqliteStore(':memory:')
  const conversationId = store.createConversation({ channel: 'voice', at: clock.now() }).id
  const t = new TranscriptAssembler({
    store,
    conversationId,
    clock,
    log: silentLogger,
    lateWords: () => lateWords,
  })
  const chat = () =>
    store.messages(conversationId).map((m) => {
      if (m.role === 'user') return `user: ${m.text}`
      if (m.role === 'tool') return `tool ${m.toolCallId}`
      return `assistant: ${m.text}${m.toolCalls.map((c) => `[${c.id}]`).join('')}`
    })
  return { clock, t, chat }
}

describe('TranscriptAssembler: words transcribed after the reply they led to began (docs/voice-driver.md, rule 8)', () => {
  it('late words of the turn the reply answers are written before that reply', async () => {
    const { t, chat } = world()
    t.modelOutput()
    t.modelText('It is noon.')
    t.turnComplete(false)
    expect(chat()).toEqual([]) // the reply waits for its words
    t.userText('What time is it?', late)
    expect(chat()).toEqual(['user: What time is it?', 'assistant: It is noon.'])
    t.flush()
    expect(chat()).toEqual(['user: What time is it?', 'assistant: It is noon.'])
  })

  it('with a tool call: the words come before the call, its outcome and the reply; the call waits only for its record', () => {
    const { t, chat } = world()
    t.modelOutput()
    t.toolCalls([call])
    t.toolOutcome(call, { ok: true, value: '12:00' })
    t.modelText('It is noon.')
    expect(chat()).toEqual([])
    t.userText('What time is it?', late)
    expect(chat()).toEqual(['user: What time is it?', 'assistant: [c1]', 'tool c1'])
    t.turnComplete(false)
    expect(chat()).toEqual([
      'user: What time is it?',
      'assistant: [c1]',
      'tool c1',
      'assistant: It is noon.',
    ])
  })

  it('a call made before its words arrived shows no words for approval, never the turn before', () => {
    const { t } = world()
    t.userText('What time is it?')
    t.modelOutput()
    t.modelText('It is noon.')
    t.turnComplete(false)
    expect(t.lastWords()).toBe('What time is it?')
    // The next turn: the model calls a tool before the words that led to it are transcribed.
    t.modelOutput()
    t.toolCalls([call])
    expect(t.lastWords()).toBeUndefined()
    t.userText('Unlock the front door.', late)
    expect(t.lastWords()).toBe('Unlock the front door.')
  })

  it('late words while the complete reply still plays go before it', () => {
    const { t, chat } = world()
    t.modelOutput()
    t.modelText('It is noon.')
    t.turnComplete(true)
    t.userText('What time is it?', late)
    t.playedOut()
    expect(chat()).toEqual(['user: What time is it?', 'assistant: It is noon.'])
  })

  it('the bound: words that never come hold the chat 3 s at most, then it is written as before', async () => {
    const { clock, t, chat } = world()
    t.modelOutput()
    t.toolCalls([call])
    t.toolOutcome(call, { ok: true, value: '12:00' })
    await clock.advance(2999)
    expect(chat()).toEqual([])
    await clock.advance(1)
    expect(chat()).toEqual(['assistant: [c1]', 'tool c1'])
    // Words later than the bound still come before what is not yet written: the reply's text.
    t.modelText('It is noon.')
    t.userText('What time is it?', late)
    t.turnComplete(false)
    expect(chat()).toEqual([
      'assistant: [c1]',
      'tool c1',
      'user: What time is it?',
      'assistant: It is noon.',
    ])
  })

  it('a failed transcription (empty words marked late) lets the reply go at once', () => {
    const { t, chat } = world()
    t.modelOutput()
    t.toolCalls([call])
    t.userText('', late)
    expect(chat()).toEqual(['assistant: [c1]'])
  })

  it('a provider that never marks words late holds nothing: the reply is written as it completes, and its words after it', () => {
    const { t, chat } = world(false)
    t.modelOutput()
    t.modelText('It is noon.')
    t.toolCalls([call])
    expect(chat()).toEqual(['assistant: [c1]']) // the call's record at once, not held
    expect(t.lastWords()).toBeUndefined() // still not the words of an earlier turn
    t.userText('What time is it?')
    expect(t.lastWords()).toBe('What time is it?')
    t.turnComplete(false)
    t.playedOut()
    t.flush()
    expect(chat()).toEqual(['assistant: [c1]', 'assistant: It is noon.', 'user: What time is it?'])
  })

  it('words known before the reply began hold nothing', () => {
    const { t, chat } = world()
    t.userText('What time is it?')
    t.modelOutput()
    t.toolCalls([call])
    expect(chat()).toEqual(['user: What time is it?', 'assistant: [c1]'])
  })

  it('the barge-in rule stands: words said during a reply, not marked late, come after its kept part', () => {
    const { t, chat } = world()
    t.userText('Tell me a story.')
    t.modelOutput()
    t.modelText('Once upon a time.')
    t.userText('And the weather?') // the next question, said while the reply is transcribed
    t.turnComplete(false)
    t.modelOutput()
    t.modelText('Sunny.')
    t.turnComplete(false)
    expect(chat()).toEqual([
      'user: Tell me a story.',
      'assistant: Once upon a time.',
      'user: And the weather?',
      'assistant: Sunny.',
    ])
  })

  it('late words of one turn and barge-in words over its reply: late words first, the cut reply dropped, the barge-in words after', async () => {
    const { clock, t, chat } = world()
    t.modelOutput()
    t.toolCalls([call])
    t.modelText('Once upon')
    t.cutReply()
    t.interrupted()
    t.userText('Stop.')
    t.userText('Tell me a story.', late)
    await clock.advance(5000)
    t.flush()
    expect(chat()).toEqual(['user: Tell me a story.', 'assistant: [c1]', 'user: Stop.'])
  })
})
