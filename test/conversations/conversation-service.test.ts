import { describe, expect, it } from 'vitest'
import { ConversationService } from '../../src/conversations/conversation-service.js'
import { LiveConversations } from '../../src/conversations/live-conversations.js'
import { TranscriptFeed } from '../../src/conversations/transcript-feed.js'
import type { StoredMessage } from '../../src/core/conversation.js'
import { silentLogger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import { ScriptedLLM, type ScriptStep } from '../../src/testing/scripted-llm.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { TurnLoop } from '../../src/turn/turn-loop.js'
import { coreFixture } from '../helpers/core.js'

function setup(steps: ScriptStep[] = [], tools: Tool[] = []) {
  const f = coreFixture()
  const feed = new TranscriptFeed(f.store, silentLogger)
  const llm = new ScriptedLLM(steps)
  const turns = new TurnLoop({
    llm,
    tools: new ToolSet(tools),
    gate: f.gate,
    store: feed,
    persona: defaultPersona,
    clock: f.clock,
    logger: silentLogger,
  })
  const live = new LiveConversations()
  const service = new ConversationService({
    store: feed,
    turns,
    live,
    clock: f.clock,
    logger: silentLogger,
  })
  return { f, feed, llm, live, service }
}

describe('ConversationService', () => {
  it('lists newest first with a one-line summary and the last message', async () => {
    const { f, service } = setup()
    const a = f.store.createConversation({ channel: 'voice', at: 1 })
    f.store.append(a.id, {
      role: 'user',
      text: `Tell me ${'a lot '.repeat(30)}`,
      channel: 'voice',
      at: 2,
    })
    f.store.append(a.id, {
      role: 'assistant',
      text: 'Sure.',
      toolCalls: [],
      channel: 'voice',
      at: 3,
    })
    const b = f.store.createConversation({ channel: 'text', title: 'Shopping', at: 5 })
    const list = service.list()
    expect(list.map((c) => c.id)).toEqual([b.id, a.id])
    expect(list[0]).toMatchObject({ summary: 'Shopping', last: null, channel: 'text' })
    expect(list[1]?.summary).toHaveLength(80)
    expect(list[1]?.summary.endsWith('…')).toBe(true)
    expect(list[1]?.last).toEqual({ role: 'assistant', text: 'Sure.', at: 3 })
  })

  it('a summary names the phones that typed in it, each once, in the order each first typed; none when nobody is known to have', async () => {
    const { f, service } = setup([
      { text: 'Locked.', toolCalls: [] },
      { text: 'Still locked.', toolCalls: [] },
      { text: 'Yes.', toolCalls: [] },
      { text: 'Noon.', toolCalls: [] },
    ])
    // Typed by Ben on his phone, then by Anna, then by Ben again.
    const typed = (await service.say({ conversationId: 'new', text: 'Locked?', phone: 'ben' }))
      .conversationId
    await service.say({ conversationId: typed, text: 'Sure?', phone: 'anna' })
    await service.say({ conversationId: typed, text: 'Thanks', phone: 'ben' })
    // Spoken in the room, then continued by Anna's typing.
    const spoken = f.store.createConversation({ channel: 'voice', at: 1 })
    f.store.append(spoken.id, { role: 'user', text: 'What time is it?', channel: 'voice', at: 2 })
    await service.say({ conversationId: spoken.id, text: 'And now?', phone: 'anna' })
    // Spoken only; and typed on a speaker that did not yet keep who typed (no `by`).
    const heard = f.store.createConversation({ channel: 'voice', at: 3 })
    f.store.append(heard.id, { role: 'user', text: 'Hello', channel: 'voice', at: 4 })
    const older = f.store.createConversation({ channel: 'text', at: 5 })
    f.store.append(older.id, { role: 'user', text: 'Hi', channel: 'text', at: 6 })

    const byId = new Map(service.list().map((c) => [c.id, c]))
    expect(byId.get(typed)?.typedBy).toEqual(['ben', 'anna'])
    expect(byId.get(spoken.id)).toMatchObject({ channel: 'voice', typedBy: ['anna'] })
    expect(byId.get(heard.id)).not.toHaveProperty('typedBy')
    expect(byId.get(older.id)).not.toHaveProperty('typedBy')
  })

  it('refuses absurd pages and unknown or SQL-shaped ids, changing nothing', () => {
    const { f, service } = setup()
    const c = f.store.createConversation({ channel: 'voice', at: 1 })
    expect(() => service.list({ limit: 1_000_000 })).toThrow(
      /limit: expected a whole number from 1 to 100/,
    )
    expect(() => service.list({ beforeId: c.id })).toThrow(/beforeId: needs before/)
    expect(service.list({ before: 1, beforeId: "x' OR '1'='1" })).toEqual([])
    expect(() => service.show({ id: c.id, limit: 1_000_000 })).toThrow(/from 1 to 500/)
    expect(() => service.show({ id: "x' OR '1'='1" })).toThrow(/no such conversation/)
    expect(() => service.delete("'; DROP TABLE messages; --")).toThrow(/no such conversation/)
    expect(f.store.getConversation(c.id)).toBeDefined()
  })

  it('continues a spoken conversation by typing, with the whole history sent to the model', async () => {
    const { f, llm, service } = setup([{ text: 'Yes, still locked.', toolCalls: [] }])
    const c = f.store.createConversation({ channel: 'voice', at: 1 })
    f.store.append(c.id, { role: 'user', text: 'Is the door locked?', channel: 'voice', at: 2 })
    f.store.append(c.id, {
      role: 'assistant',
      text: 'Yes.',
      toolCalls: [],
      channel: 'voice',
      at: 3,
    })
    const r = await service.say({ conversationId: c.id, text: 'Still?', phone: 'anna' })
    expect(r).toEqual({ conversationId: c.id, text: 'Yes, still locked.' })
    expect(llm.requests[0]?.history.map((m) => m.role === 'tool' || m.text)).toEqual([
      'Is the door locked?',
      'Yes.',
      'Still?',
    ])
  })

  it('"new" starts a typed conversation', async () => {
    const { f, service } = setup([{ text: 'Hello.', toolCalls: [] }])
    const r = await service.say({ conversationId: 'new', text: 'Hi', phone: 'anna' })
    expect(f.store.getConversation(r.conversationId)?.channel).toBe('text')
  })

  it('refuses a typed message while the conversation is live by voice, and stores nothing', async () => {
    const { f, live, service } = setup([{ text: 'x', toolCalls: [] }])
    const c = f.store.createConversation({ channel: 'voice', at: 1 })
    live.begin(c.id)
    await expect(
      service.say({ conversationId: c.id, text: 'hello', phone: 'anna' }),
    ).rejects.toMatchObject({
      code: 'NOC_ERR_CONVERSATION_LIVE',
    })
    expect(f.store.messages(c.id)).toEqual([])
    live.end(c.id)
    await service.say({ conversationId: c.id, text: 'hello', phone: 'anna' })
    expect(f.store.messages(c.id)).toHaveLength(2)
  })

  it('queues two typed messages to one conversation: the second turn starts after the first ends', async () => {
    let release!: () => void
    const held = new Promise<void>((r) => {
      release = r
    })
    const { f, llm, service } = setup([
      { text: 'first answer', toolCalls: [] },
      { text: 'second answer', toolCalls: [] },
    ])
    const slow = llm.next.bind(llm)
    let calls = 0
    llm.next = async (req, signal) => {
      calls++
      if (calls === 1) await held
      return slow(req, signal)
    }
    const c = f.store.createConversation({ channel: 'text', at: 1 })
    const one = service.say({ conversationId: c.id, text: 'one', phone: 'anna' })
    const two = service.say({ conversationId: c.id, text: 'two', phone: 'ben' })
    await settle()
    expect(calls).toBe(1)
    release()
    await Promise.all([one, two])
    expect(f.store.messages(c.id).map((m) => (m.role === 'tool' ? '' : m.text))).toEqual([
      'one',
      'first answer',
      'two',
      'second answer',
    ])
  })

  it('delete removes the conversation for real', () => {
    const { f, service } = setup()
    const c = f.store.createConversation({ channel: 'voice', at: 1 })
    f.store.append(c.id, { role: 'user', text: 'x', channel: 'voice', at: 2 })
    service.delete(c.id)
    expect(f.store.getConversation(c.id)).toBeUndefined()
    expect(f.store.messages(c.id)).toEqual([])
  })

  it('the feed announces every stored message to followers, and a broken follower harms nothing', () => {
    const { f, feed } = setup()
    const seen: StoredMessage[] = []
    feed.subscribe(() => {
      throw new Error('follower crashed')
    })
    const stop = feed.subscribe((m) => seen.push(m))
    const c = feed.createConversation({ channel: 'voice', at: 1 })
    feed.append(c.id, { role: 'user', text: 'hello', channel: 'voice', at: 2 })
    stop()
    feed.append(c.id, { role: 'user', text: 'unseen', channel: 'voice', at: 3 })
    expect(seen.map((m) => [m.seq, m.role === 'user' && m.text])).toEqual([[1, 'hello']])
    expect(f.store.messages(c.id)).toHaveLength(2)
  })

  it('a typed turn that needs approval asks with the typing phone as askedBy; asking is not approving', async () => {
    const light: Tool = {
      name: 'set_light',
      description: 'Switches a light on.',
      parameters: { type: 'object', properties: {} },
      policy: { text: 'ask' },
      call: async () => ({ on: true }),
    }
    const { f, service } = setup(
      [
        { text: '', toolCalls: [{ id: 'x1', name: 'set_light', args: {} }] },
        { text: 'Done.', toolCalls: [] },
      ],
      [light],
    )
    const said = service.say({ conversationId: 'new', text: 'Light, please', phone: 'anna' })
    await settle()
    expect(f.approver.last().request).toMatchObject({ channel: 'text', askedBy: 'anna' })
    f.approver.last().answer({ decision: 'approve', by: 'ben' })
    expect((await said).text).toBe('Done.')
  })
})
