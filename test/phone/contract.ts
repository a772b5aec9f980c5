import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { StoredMessage } from '../../src/core/conversation.js'
import { silentLogger } from '../../src/core/logger.js'
import type { CallContext, Tool } from '../../src/core/types.js'
import { DeviceRefusal, type FollowEvent } from '../../src/phone/conversations.js'
import { type ConversationOp, newNonce, signConversationRequest } from '../../src/protocol/index.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { docJsonBlocks, docVector } from '../helpers/protocol-doc.js'
import { tick, until } from '../helpers/wait.js'
import { lightTool, type PhoneWorld, worldsOn } from './world.js'

/** What the phone got, and what the store holds, in one comparable shape. */
function asStored(m: StoredMessage): Record<string, unknown> {
  const { conversationId: _c, ...rest } = m
  return JSON.parse(JSON.stringify(rest))
}

/** The texts of a generateContent request's contents, in order (function parts by name). */
function contentTexts(body: Record<string, unknown> | undefined): string[] {
  const contents = (body?.contents ?? []) as { role: string; parts: Record<string, unknown>[] }[]
  return contents.flatMap((c) =>
    c.parts.map((p) => {
      if (typeof p.text === 'string') return `${c.role}: ${p.text}`
      if (p.functionCall) return `${c.role}: call ${(p.functionCall as { name: string }).name}`
      if (p.functionResponse)
        return `${c.role}: result ${(p.functionResponse as { name: string }).name}`
      return `${c.role}: ?`
    }),
  )
}

/** A request signed by hand, for the hostile cases. */
function signed(
  w: PhoneWorld,
  op: ConversationOp,
  args: Record<string, unknown>,
  o: { phone?: string; key?: Buffer; device?: string; at?: number } = {},
): string {
  const phone = o.phone ?? 'anna'
  const key = o.key ?? w.keys.get(phone) ?? randomBytes(32)
  const fields = {
    id: newNonce().slice(0, 20),
    device: o.device ?? w.deviceId,
    phone,
    op,
    args,
    at: o.at ?? Date.now(),
    nonce: newNonce(),
  }
  return JSON.stringify({ v: 1, ...fields, mac: signConversationRequest(key, fields) })
}

/**
 * Conversations on the phone (issue 6), run unchanged against Mosquitto (with the per-phone ACL of
 * docs/protocol.md) and the embedded broker.
 */
export function conversationsContract(
  name: string,
  make: (port: number) => TestBroker,
  skip?: string,
) {
  describe.skipIf(skip !== undefined)(`conversations on the phone (${name})`, () => {
    const worlds = worldsOn(make)

    it('a spoken session is followed live, then listed and read exactly as stored (barge-in cut reply absent), and continued by typing with the full history', async () => {
      const w = await worlds.open()
      const anna = await w.phone('anna')
      const ben = await w.phone('ben')
      const seen: FollowEvent[] = []
      const follow = await ben.follow('*', (e) => seen.push(e))

      const id = await w.speak(async (conn, clock) => {
        conn.user('What time is it?')
        conn.toolCall({ id: 'c1', name: 'current_time', args: {} })
        await tick()
        await settle()
        conn.model('It is noon.')
        conn.audio(200)
        conn.turnComplete()
        await tick()
        await settle()
        conn.user('Tell me a story.')
        conn.model('Once upon a time')
        conn.audio(3000)
        await tick()
        await clock.advance(500)
        conn.interrupted()
        conn.turnComplete()
        await tick()
        conn.user('Actually, is it sunny?')
        conn.model('Yes, sunny.')
        conn.turnComplete()
        await tick()
        await settle()
      })
      const stored = w.store.messages(id)
      const texts = stored.map((m) => (m.role === 'tool' ? `tool ${m.toolName}` : m.text))
      expect(texts).toEqual([
        'What time is it?',
        '',
        'tool current_time',
        'It is noon.',
        'Tell me a story.',
        'Actually, is it sunny?',
        'Yes, sunny.',
      ])
      expect(texts.join('|')).not.toContain('Once upon a time')

      // The live view: every stored message reached the following phone, in order, as stored.
      await until(() => seen.filter((e) => e.kind === 'message').length >= stored.length, 'follow')
      expect(
        seen
          .filter((e) => e.kind === 'message')
          .map((e) => (e.body as { message: unknown }).message),
      ).toEqual(stored.map(asStored))
      await follow.stop()

      // Listed and read on another phone: exactly the stored rows, in order.
      const { conversations } = await anna.list({ limit: 50 })
      expect(conversations[0]).toMatchObject({ id, channel: 'voice', summary: 'What time is it?' })
      const shown = await anna.showAll(id)
      expect(shown).toEqual(stored.map(asStored))
      const call = shown.find(
        (m) => m.role === 'assistant' && (m.toolCalls as unknown[]).length > 0,
      )
      expect(call?.toolCalls).toEqual([{ id: 'c1', name: 'current_time', args: {} }])
      expect(shown.find((m) => m.role === 'tool')).toMatchObject({
        toolName: 'current_time',
        outcome: { ok: true, value: { time: '12:00' } },
      })

      // Continued by typing: the answer streams in parts, and the model got the whole history.
      w.server.queueGenerate({ text: 'It was noon then, and it is still sunny now.' })
      const parts: string[] = []
      const r = await anna.say(id, 'Is it still sunny?', { onPart: (t) => parts.push(t) })
      expect(r).toEqual({
        conversation: id,
        info: {
          channel: 'voice',
          title: null,
          createdAt: expect.any(Number),
          updatedAt: expect.any(Number),
        },
        text: 'It was noon then, and it is still sunny now.',
      })
      expect(parts.length).toBeGreaterThan(1)
      expect(parts.join('')).toBe(r.text)
      const asked = w.server.rest.filter((q) => q.path.includes('GenerateContent')).at(-1)
      const history = w.store.messages(id).slice(0, -1)
      const want = history.flatMap((m): string[] => {
        if (m.role === 'user') return [`user: ${m.text}`]
        if (m.role === 'tool') return [`user: result ${m.toolName}`]
        return [
          ...(m.text ? [`model: ${m.text}`] : []),
          ...m.toolCalls.map((c) => `model: call ${c.name}`),
        ]
      })
      expect(contentTexts(asked?.body)).toEqual(want)
      expect(want.at(-1)).toBe('user: Is it still sunny?')
      expect(want.join('|')).not.toContain('Once upon a time')
      // Neither the typed words nor the answer reach a log line.
      const logged = JSON.stringify(w.logger.entries)
      expect(logged).not.toContain('Is it still sunny?')
      expect(logged).not.toContain('still sunny now')
    })

    it('follow "*" per docs/protocol.md (follow-vector): the typing phone gets no message of its own running turn, every other follower gets each one; approvals reach both', async () => {
      const v = docVector('follow-vector')
      const roles = (k: string) => (v[k] === '(none)' ? [] : (v[k] ?? '?').split(','))
      const w = await worlds.open()
      const approves = await w.approvals('ben')
      const seen = new Map<string, FollowEvent[]>()
      const phones = new Map<string, Awaited<ReturnType<PhoneWorld['phone']>>>()
      for (const name of ['anna', 'ben']) {
        const p = await w.phone(name)
        const got: FollowEvent[] = []
        seen.set(name, got)
        phones.set(name, p)
        await p.follow(v[`follow.${name}`] ?? '?', (e) => got.push(e))
      }
      const of = (name: string, kind: string, conversation: string) =>
        (seen.get(name) ?? []).filter(
          (e) => e.kind === kind && e.body.conversation === conversation,
        )
      const messageRoles = (name: string, conversation: string, fromSeq: number) =>
        of(name, 'message', conversation)
          .map((e) => e.body.message as { seq: number; role: string })
          .filter((m) => m.seq > fromSeq)
          .map((m) => m.role)

      // The first turn: typed by anna, gated, approved by ben.
      w.server.queueGenerate(
        { functionCalls: [{ id: 'f1', name: 'set_light', args: { room: 'hall' } }] },
        { text: 'The hall light is on.' },
      )
      const first = phones.get(v['first.typed-by'] ?? '?')?.say('new', 'Switch on the hall light')
      await until(() => w.asked.length === 1, 'the gate to ask')
      await approves.decide((await approves.waitFor(w.asked[0]?.id ?? '')).id, 'approve', 'once')
      const c = (await first)?.conversation ?? ''
      const stored = () => w.store.messages(c)
      expect(stored().map((m) => m.role)).toEqual(roles('first.stored'))
      for (const name of ['anna', 'ben']) {
        const want = roles(`first.follow.${name}.message`)
        await until(() => messageRoles(name, c, 0).length >= want.length, `${name}'s follow`)
        const approvals = roles(`first.follow.${name}.approval`)
        await until(() => of(name, 'approval', c).length >= approvals.length, `${name}'s approvals`)
        expect(of(name, 'approval', c).map((e) => e.body.state)).toEqual(approvals)
      }

      // Then a turn typed by ben in the same conversation.
      const before = stored().length
      w.server.queueGenerate({ text: 'You are welcome.' })
      await phones.get(v['then.typed-by'] ?? '?')?.say(c, 'Thank you')
      expect(
        stored()
          .slice(before)
          .map((m) => m.role),
      ).toEqual(roles('then.stored'))
      for (const name of ['anna', 'ben']) {
        const want = roles(`then.follow.${name}.message`)
        await until(() => messageRoles(name, c, before).length >= want.length, `${name}'s follow`)
      }
      // Nothing more arrives late: a stored message sent after the turn would be one too many.
      await tick()
      for (const name of ['anna', 'ben']) {
        expect(messageRoles(name, c, 0), `${name}'s follow`).toEqual([
          ...roles(`first.follow.${name}.message`),
          ...roles(`then.follow.${name}.message`),
        ])
      }
      // Who typed each person's message, stored and read back with a signed show (issue 44).
      const shown = (await phones.get('ben')?.showAll(c)) ?? []
      const typedBy = shown.filter((m) => m.role === 'user').map((m) => m.by)
      expect(typedBy).toEqual(roles('show.user.by'))
      expect(typedBy).toEqual([v['first.typed-by'], v['then.typed-by']])
      expect(stored().filter((m) => m.role === 'user')).toMatchObject(
        typedBy.map((by) => ({ channel: 'text', by })),
      )
      // The list says so too, without reading the chat: who typed it, in the order each first typed.
      const listed = (await phones.get('anna')?.list({ limit: 50 }))?.conversations ?? []
      expect(listed.find((l) => l.id === c)?.typedBy).toEqual(roles('list.typed-by'))
    })

    it('a typed turn asks for approval like a spoken one; the asker may approve an ordinary tool, a critical one needs another phone, and a grant for text does not open voice', async () => {
      const w = await worlds.open()
      const anna = await w.phone('anna')
      const annaApproves = await w.approvals('anna')
      const benApproves = await w.approvals('ben')
      // Ben follows everything: he sees the typed turns' approvals asked for and ended.
      const ben = await w.phone('ben')
      const seen: FollowEvent[] = []
      await ben.follow('*', (e) => seen.push(e))

      // An ordinary gated tool: anna asks, anna approves, remembered for text for an hour.
      w.server.queueGenerate(
        { functionCalls: [{ id: 't1', name: 'set_light', args: { room: 'kitchen' } }] },
        { text: 'The kitchen light is on.' },
      )
      const pending: Record<string, unknown>[] = []
      const said = anna.say('new', 'Switch on the kitchen light', {
        onPending: (p) => pending.push(p),
      })
      await until(() => w.asked.length === 1, 'the gate to ask')
      const first = await annaApproves.waitFor(w.asked[0]?.id ?? '')
      expect(first).toMatchObject({ tool: 'set_light', channel: 'text', askedBy: 'anna' })
      await annaApproves.decide(first.id, 'approve', { until: Date.now() + 3_600_000 })
      const r = await said
      expect(r.text).toBe('The kitchen light is on.')
      expect(w.lit).toEqual(['kitchen'])
      expect(pending[0]).toMatchObject({ tool: 'set_light', action: 'switch on the kitchen light' })
      expect(w.grants.list()).toMatchObject([{ tool: 'set_light', channel: 'text' }])

      // The same call spoken: the text grant does not cover it; a phone is asked again.
      const ctx: CallContext = {
        signal: new AbortController().signal,
        channel: 'voice',
        conversationId: r.conversation,
        callId: 'v1',
        gate: w.gate,
        logger: silentLogger,
        onPending: () => {},
      }
      const spoken = w.gate.check(lightTool([]) as Tool, { room: 'kitchen' }, ctx)
      spoken.catch(() => {})
      await until(() => w.asked.length === 2, 'the gate to ask for voice')
      expect(w.asked[1]).toMatchObject({ tool: 'set_light', channel: 'voice' })
      expect(w.asked[1]?.askedBy).toBeUndefined()
      const second = await benApproves.waitFor(w.asked[1]?.id ?? '')
      await benApproves.decide(second.id, 'deny')
      await expect(spoken).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })

      // A critical tool typed by anna: her own yes is refused; ben's second look lets it run.
      w.server.queueGenerate(
        { functionCalls: [{ id: 't2', name: 'unlock_door', args: { door: 'front' } }] },
        { text: 'The front door is unlocked.' },
      )
      const door = anna.say(r.conversation, 'Unlock the front door')
      await until(() => w.asked.length === 3, 'the gate to ask for the door')
      const third = await annaApproves.waitFor(w.asked[2]?.id ?? '')
      expect(third).toMatchObject({ tool: 'unlock_door', critical: true, askedBy: 'anna' })
      await annaApproves.decide(third.id, 'approve', 'once')
      await until(() => w.refusedDecisions('self-approval') === 1, 'self-approval')
      expect(w.unlocked).toEqual([])
      expect(w.logger.entries).toContainEqual(
        expect.objectContaining({
          fields: expect.objectContaining({
            event: 'decision_rejected',
            reason: 'self-approval',
            phone: 'anna',
          }),
        }),
      )
      await benApproves.decide(third.id, 'approve', 'once')
      expect((await door).text).toBe('The front door is unlocked.')
      expect(w.unlocked).toEqual(['front'])
      const approvals = () =>
        seen
          .filter((e) => e.kind === 'approval')
          .map((e) => [e.body.tool, e.body.channel, e.body.state, e.body.by ?? null])
      await until(() => approvals().length === 6, 'the approvals in the live view')
      expect(approvals()).toEqual([
        ['set_light', 'text', 'pending', null],
        ['set_light', 'text', 'approved', 'anna'],
        ['set_light', 'voice', 'pending', null],
        ['set_light', 'voice', 'denied', 'ben'],
        ['unlock_door', 'text', 'pending', null],
        ['unlock_door', 'text', 'approved', 'ben'],
      ])
    })

    it('history (docs/protocol.md, history-vector): a call a remembered yes allowed is kept without asking, signed, with whose yes, when and until when, beside the asked one', async () => {
      const [example] = docJsonBlocks('## History', '## Speaker settings')
      const docEnding = (JSON.parse(example ?? '{}') as { body: { items: Item[] } }).body.items[0]
      type Item = Record<string, unknown> & { coveredBy?: Record<string, unknown> }
      const w = await worlds.open()
      const anna = await w.phone('anna')
      const ben = await w.phone('ben')
      const annaApproves = await w.approvals('anna')
      // Ben types; anna says yes until an hour from now: a grant for text.
      w.server.queueGenerate(
        { functionCalls: [{ id: 'h1', name: 'set_light', args: { room: 'porch' } }] },
        { text: 'The porch light is on.' },
      )
      const said = ben.say('new', 'Switch on the porch light')
      await until(() => w.asked.length === 1, 'the gate to ask')
      const until1h = Date.now() + 3_600_000
      await annaApproves.decide((await annaApproves.waitFor(w.asked[0]?.id ?? '')).id, 'approve', {
        until: until1h,
      })
      const c = (await said).conversation
      const [grant] = w.grants.list()
      // The same again: the grant answers, nobody is asked, the light goes on.
      w.server.queueGenerate(
        { functionCalls: [{ id: 'h2', name: 'set_light', args: { room: 'porch' } }] },
        { text: 'The porch light is on again.' },
      )
      const ranFrom = Date.now()
      await ben.say(c, 'Switch on the porch light again')
      const ranTo = Date.now()
      expect(w.asked).toHaveLength(1)
      expect(w.lit).toEqual(['porch', 'porch'])

      // Read back over the broker, as any phone does: a signed request, signed replies.
      const { items, replies } = await anna.request('history', { limit: 10 })
      expect(replies.every((r) => r.kind === 'items' || r.kind === 'done')).toBe(true)
      const [covered, asked] = items as Item[]
      expect(Object.keys(covered ?? {}).sort()).toEqual(Object.keys(docEnding ?? {}).sort())
      expect(Object.keys(covered?.coveredBy ?? {}).sort()).toEqual(
        Object.keys(docEnding?.coveredBy ?? {}).sort(),
      )
      expect(covered).toMatchObject({
        tool: 'set_light',
        action: 'switch on the porch light',
        args: { room: 'porch' },
        critical: false,
        channel: 'text',
        conversation: c,
        askedBy: 'ben',
        said: 'Switch on the porch light again',
        state: 'approved',
        by: 'anna',
        coveredBy: {
          grant: grant?.id,
          by: 'anna',
          createdAt: grant?.createdAt,
          expiry: 'until',
          until: until1h,
        },
      })
      expect(covered?.askedAt).toBe(covered?.endedAt)
      expect(covered?.endedAt).toBeGreaterThanOrEqual(ranFrom)
      expect(covered?.endedAt).toBeLessThanOrEqual(ranTo)
      expect(covered?.id).not.toBe(asked?.id)
      // The asked one, as before: anna's yes, what was remembered, and no coveredBy.
      expect(asked).toMatchObject({
        id: w.asked[0]?.id,
        state: 'approved',
        by: 'anna',
        grant: { until: until1h },
      })
      expect(asked).not.toHaveProperty('coveredBy')
    })

    it('a typed message while the conversation is spoken is refused with a clear answer, and nothing is stored', async () => {
      const w = await worlds.open()
      const anna = await w.phone('anna')
      const c = w.feed.createConversation({ channel: 'voice', at: Date.now() })
      w.feed.append(c.id, { role: 'user', text: 'Hello', channel: 'voice', at: Date.now() })
      w.live.begin(c.id)
      const calls = w.server.rest.length
      const refused = await anna.say(c.id, 'Are you there?').catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(DeviceRefusal)
      expect(refused).toMatchObject({
        code: 'NOC_ERR_CONVERSATION_LIVE',
        message: expect.stringMatching(/being spoken right now/),
      })
      expect(w.store.messages(c.id)).toHaveLength(1)
      expect(w.server.rest.length).toBe(calls)
    })

    it('a follow is renewed by the phone before the device ends it', async () => {
      const w = await worlds.open()
      const ben = await w.phone('ben')
      const seen: FollowEvent[] = []
      const follow = await ben.follow('*', (e) => seen.push(e), 1200)
      await tick(1500)
      const c = w.feed.createConversation({ channel: 'voice', at: Date.now() })
      w.feed.append(c.id, { role: 'user', text: 'Still there?', channel: 'voice', at: Date.now() })
      await until(() => seen.length === 1, 'the message after the first follow ran out')
      expect(seen[0]?.body).toMatchObject({ conversation: c.id, message: { text: 'Still there?' } })
      await follow.stop()
      w.feed.append(c.id, { role: 'user', text: 'Gone?', channel: 'voice', at: Date.now() })
      await tick(100)
      expect(seen).toHaveLength(1)
    })

    it('after the broker restarts, the device answers the phone again', async () => {
      const w = await worlds.open()
      const anna = await w.phone('anna')
      const c = w.feed.createConversation({ channel: 'text', at: Date.now() })
      expect((await anna.list()).conversations).toHaveLength(1)
      await worlds.broker().kill()
      await until(() => w.device.connection.connected === false, 'the device to notice')
      await worlds.broker().start()
      await until(() => w.device.connection.connected === true, 'the device to reconnect', 10_000)
      // Both ends resubscribe on their own; the first request after that is answered.
      let listed: string[] = []
      for (let i = 0; i < 40 && listed.length === 0; i++) {
        const answer = anna
          .list()
          .then((r) => r.conversations.map((x) => x.id))
          .catch(() => [] as string[])
        listed = await Promise.race([answer, tick(250).then(() => [] as string[])])
        if (listed.length === 0) await tick(100)
      }
      expect(listed).toEqual([c.id])
    })

    it('the list pages by next: conversations sharing one last activity across a page boundary are each listed once', async () => {
      const w = await worlds.open()
      const anna = await w.phone('anna')
      const at = Date.now()
      const newest = w.feed.createConversation({ channel: 'text', at: at + 1 })
      const tied = Array.from({ length: 4 }, () =>
        w.feed.createConversation({ channel: 'voice', at }),
      )
      const oldest = w.feed.createConversation({ channel: 'text', at: at - 1 })
      const expected = [newest.id, ...tied.map((c) => String(c?.id)).sort(), oldest.id]
      const listed: string[] = []
      let page = await anna.list({ limit: 2 })
      for (;;) {
        listed.push(...page.conversations.map((c) => c.id))
        if (!page.next) break
        page = await anna.list({ limit: 2, ...page.next })
      }
      expect(listed).toEqual(expected)
    })

    it('a signed delete from the phone removes the rows and vacuums the file', async () => {
      const w = await worlds.open()
      const anna = await w.phone('anna')
      const c = w.feed.createConversation({ channel: 'voice', at: Date.now() })
      w.feed.append(c.id, { role: 'user', text: 'Forget this', channel: 'voice', at: Date.now() })
      let vacuumed = 0
      const vacuum = w.feed.vacuum.bind(w.feed)
      w.feed.vacuum = () => {
        vacuumed++
        vacuum()
      }
      await anna.delete(c.id)
      expect(w.store.getConversation(c.id)).toBeUndefined()
      expect(w.store.messages(c.id)).toEqual([])
      expect(vacuumed).toBe(1)
      await expect(anna.show(c.id)).rejects.toMatchObject({ code: 'NOC_ERR_NOT_FOUND' })
    })

    it('hostile input is refused with a logged reason; nothing leaks, nothing changes', async () => {
      const w = await worlds.open()
      const c = w.feed.createConversation({ channel: 'voice', at: Date.now() })
      w.feed.append(c.id, {
        role: 'user',
        text: 'my secret words',
        channel: 'voice',
        at: Date.now(),
      })
      const before = JSON.stringify([w.store.listConversations(), w.store.messages(c.id)])
      // What reaches anna's reply topic, read as anna's own broker user.
      const annaRaw = await w.raw(USERS.anna)
      const replies: Record<string, unknown>[] = []
      annaRaw.on('message', (_t, p) => replies.push(JSON.parse(p.toString())))
      await annaRaw.subscribeAsync(w.topics.conversationReply('anna'), { qos: 1 })
      // Ben's broker user tries to read anna's replies: the ACL gives him nothing.
      const benRaw = await w.raw(USERS.ben)
      const stolen: string[] = []
      benRaw.on('message', (t) => stolen.push(t))
      await benRaw.subscribeAsync(w.topics.conversationReply('anna'), { qos: 1 }).catch(() => {})
      const intruder = await w.raw()
      const topics = w.topics
      const send = (payload: string, phone = 'anna') =>
        intruder.publishAsync(topics.conversationRequest(phone), payload, { qos: 1 })

      const { mac: _m, ...unsigned } = JSON.parse(signed(w, 'list', {}))
      await send(JSON.stringify(unsigned))
      await send(signed(w, 'list', {}, { key: randomBytes(32) }))
      await send(signed(w, 'list', {}, { device: 'another-device' }))
      await send(signed(w, 'list', {}, { phone: 'mallory' }), 'mallory')
      await send(signed(w, 'list', {}), 'ben')
      await send(signed(w, 'list', {}, { at: Date.now() - 5 * 60_000 }))
      await send('{"v":1,')
      await send(Buffer.alloc(17 * 1024, 0x61).toString())
      // A request for another device's topic never reaches this device at all.
      await intruder.publishAsync(
        `${PREFIX}/another-device/conversations/request/anna`,
        signed(w, 'delete', { conversation: c.id }),
        { qos: 1 },
      )
      const valid = signed(w, 'list', {})
      await send(valid)
      await until(() => replies.some((r) => r.kind === 'done'), 'the valid list')
      await send(valid)
      await send(signed(w, 'list', { limit: 1_000_000 }))
      await send(signed(w, 'show', { conversation: "x' OR '1'='1" }))
      await send(signed(w, 'delete', { conversation: "'; DROP TABLE messages; --" }))
      await send(signed(w, 'show', { conversation: c.id, limit: 1_000_000 }))
      await until(() => replies.filter((r) => r.kind === 'error').length === 4, 'four refusals')
      await until(() => (w.refusedRequests()['replayed-nonce'] ?? 0) === 1, 'the replay')

      expect(w.refusedRequests()).toEqual({
        'invalid-payload': 1,
        'bad-mac': 1,
        'wrong-device': 1,
        'unknown-phone': 1,
        'phone-mismatch': 1,
        'outside-window': 1,
        'malformed-json': 1,
        oversized: 1,
        'replayed-nonce': 1,
      })
      const reasons = w.logger.entries
        .filter((e) => e.fields.event === 'conversation_request_rejected')
        .map((e) => e.fields.reason)
      expect(reasons).toHaveLength(9)
      expect(
        replies.filter((r) => r.kind === 'error').map((r) => (r.body as { code: string }).code),
      ).toEqual([
        'NOC_ERR_BAD_REQUEST',
        'NOC_ERR_NOT_FOUND',
        'NOC_ERR_NOT_FOUND',
        'NOC_ERR_BAD_REQUEST',
      ])
      // Only the one valid list was answered with data; the refused ones got nothing at all.
      expect(replies.filter((r) => r.kind === 'done')).toHaveLength(1)
      expect(JSON.stringify([w.store.listConversations(), w.store.messages(c.id)])).toBe(before)
      await tick(100)
      expect(stolen).toEqual([])
      // The words never reach a log line.
      expect(JSON.stringify(w.logger.entries)).not.toContain('secret words')
      // The phone believes only the device: a forged answer on its reply topic is refused.
      const anna = await w.phone('anna')
      const forged = {
        v: 1,
        re: 'guessed-id',
        device: w.deviceId,
        phone: 'anna',
        n: 0,
        kind: 'done',
        body: { count: 0 },
        at: Date.now(),
        mac: 'a'.repeat(64),
      }
      await intruder.publishAsync(topics.conversationReply('anna'), JSON.stringify(forged), {
        qos: 1,
      })
      await until(() => anna.refused === 1, 'the forged reply to be refused')
      expect((await anna.list()).conversations.map((x) => x.id)).toEqual([c.id])
      expect(anna.refused).toBe(1)
      // Nothing under conversations/ is retained for a later reader.
      const late = await w.raw()
      const retained: string[] = []
      late.on('message', (t, _p, packet) => {
        if (packet.retain) retained.push(t)
      })
      await late.subscribeAsync(`${PREFIX}/${w.deviceId}/conversations/#`, { qos: 1 })
      await tick(200)
      expect(retained).toEqual([])
    })
  })
}
