import { describe, expect, it } from 'vitest'
import type { FollowEvent } from '../../src/phone/conversations.js'
import { mosquittoBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { type PhoneWorld, worldsOn } from '../phone/world.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
const LIMIT = 16 * 1024

/** Every reply to anna, as the broker carried it, read as the device's broker user. */
async function tap(w: PhoneWorld) {
  const wire: Buffer[] = []
  const c = await w.raw(USERS.device)
  await c.subscribeAsync(w.topics.conversationReply('anna'))
  c.on('message', (_t, p) => wire.push(p))
  return {
    wire,
    replies: () => wire.map((p) => JSON.parse(p.toString()) as Record<string, unknown>),
  }
}

describe.skipIf(skip !== undefined)('conversation replies a phone can rely on (Mosquitto)', () => {
  const worlds = worldsOn(mosquittoBroker)

  it('a long answer to say arrives whole in replies that each fit 16 KiB, the final done included', async () => {
    const w = await worlds.open()
    const anna = await w.phone('anna')
    const t = await tap(w)
    // ~40 KB as UTF-8, most of it one streamed piece (no spaces), with quotes that grow when
    // escaped and astral characters that must not be cut in half.
    const long = `Here it is: ${'«🌙"ß»'.repeat(3000)} and that is all.`
    expect(Buffer.byteLength(long)).toBeGreaterThan(2 * LIMIT)
    w.server.queueGenerate({ text: long })
    const parts: string[] = []
    const r = await anna.say('new', 'Tell me everything', { onPart: (p) => parts.push(p) })
    await until(() => t.replies().some((x) => x.kind === 'done'), 'the tap to hear done')
    expect(r.text).toBe(long)
    expect(parts.join('')).toBe(long)
    expect(parts.length).toBeGreaterThan(4)
    for (const p of parts) expect(Buffer.byteLength(JSON.stringify(p))).toBeLessThanOrEqual(8192)
    const mine = t.replies().filter((x) => x.kind !== 'done' || x.re !== undefined)
    for (const p of t.wire) expect(p.length).toBeLessThanOrEqual(LIMIT)
    const done = mine.at(-1) as { kind: string; body: Record<string, unknown> }
    expect(done.kind).toBe('done')
    expect(done.body.text).toBeUndefined()
    expect(done.body.conversation).toBe(r.conversation)
    const pieces = mine
      .filter((x) => x.kind === 'items')
      .flatMap((x) => (x.body as { items: string[] }).items)
    expect(pieces.join('')).toBe(long)
    // Listed, its summary is too large for a reply only by its last text: the rest still comes,
    // who typed it among them.
    const listed = (await anna.list()).conversations.find((c) => c.id === r.conversation)
    expect(listed).toMatchObject({
      channel: 'text',
      summary: 'Tell me everything',
      typedBy: ['anna'],
      last: null,
      truncated: true,
    })
    await until(
      () => t.replies().some((x) => x.kind === 'done' && 'count' in (x.body as object)),
      "the tap to hear the list's done",
    )

    // A short answer still comes whole in done.text.
    w.server.queueGenerate({ text: 'Short.' })
    const before = t.wire.length
    expect((await anna.say(r.conversation, 'And briefly?')).text).toBe('Short.')
    await until(() => t.wire.length > before + 1, 'the tap to hear the answer')
    const last = t.replies().slice(before).at(-1) as { kind: string; body: Record<string, unknown> }
    expect(last).toMatchObject({
      kind: 'done',
      body: { conversation: r.conversation, text: 'Short.' },
    })
  })

  it('next is present only when another page exists (list and show)', async () => {
    const w = await worlds.open()
    const anna = await w.phone('anna')
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const c = w.feed.createConversation({ channel: 'voice', at: 1000 + i })
      w.feed.append(c.id, { role: 'user', text: `hello ${i}`, channel: 'voice', at: 2000 + i })
      ids.push(c.id)
    }
    const all = await anna.list({ limit: 3 })
    expect(all.conversations.map((c) => c.id)).toEqual([...ids].reverse())
    expect(all.next).toBeNull()
    const first = await anna.list({ limit: 2 })
    expect(first.conversations).toHaveLength(2)
    expect(first.next).not.toBeNull()
    const second = await anna.list({ limit: 2, before: first.next?.before })
    expect(second.conversations.map((c) => c.id)).toEqual([ids[0]])
    expect(second.next).toBeNull()

    const c = ids[0] as string
    for (let i = 0; i < 3; i++) {
      w.feed.append(c, { role: 'user', text: `more ${i}`, channel: 'voice', at: 3000 + i })
    }
    const whole = await anna.show(c, { limit: 4 })
    expect(whole.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4])
    expect(whole.next).toBeNull()
    const p1 = await anna.show(c, { limit: 2 })
    expect(p1.next).toEqual({ afterSeq: 2 })
    const p2 = await anna.show(c, { limit: 2, afterSeq: 2 })
    expect(p2.messages.map((m) => m.seq)).toEqual([3, 4])
    expect(p2.next).toBeNull()
  })

  it('show and say answer a conversation in one shape: its id, and the same info', async () => {
    const w = await worlds.open()
    const anna = await w.phone('anna')
    const t = await tap(w)
    w.server.queueGenerate({ text: 'Hello.' })
    const said = await anna.say('new', 'Hi')
    const shown = await anna.show(said.conversation)
    await until(() => t.replies().filter((r) => r.kind === 'done').length === 2, 'the tap')
    const dones = t
      .replies()
      .filter((r) => r.kind === 'done')
      .map((r) => r.body as Record<string, unknown>)
    expect(dones).toHaveLength(2)
    for (const d of dones) {
      expect(d.conversation).toBe(said.conversation)
      expect(Object.keys(d.info as object).sort()).toEqual([
        'channel',
        'createdAt',
        'title',
        'updatedAt',
      ])
    }
    expect(shown.conversation).toBe(said.conversation)
    expect(shown.info).toEqual(said.info)
    expect(said.info).toMatchObject({ channel: 'text', title: null })
  })
})

describe.skipIf(skip !== undefined)('a typed reply goes back one way (Mosquitto)', () => {
  const worlds = worldsOn(mosquittoBroker)

  it("the phone that typed has its turn as the say's replies, not again through its follow; another phone following sees every stored message", async () => {
    const w = await worlds.open()
    const anna = await w.phone('anna')
    const ben = await w.phone('ben')
    const annaSaw: FollowEvent[] = []
    const benSaw: FollowEvent[] = []
    const annaFollow = await anna.follow('*', (e) => annaSaw.push(e))
    const benFollow = await ben.follow('*', (e) => benSaw.push(e))
    const messagesIn = (seen: FollowEvent[], id: string) =>
      seen.filter(
        (e) => e.kind === 'message' && (e.body as { conversation?: string }).conversation === id,
      )

    w.server.queueGenerate({ text: 'Hello, Anna.' })
    const r = await anna.say('new', 'Hello?')
    expect(r.text).toBe('Hello, Anna.')
    await until(() => messagesIn(benSaw, r.conversation).length >= 2, 'ben to see the turn')

    // Ben types into the same conversation: now Anna's follow carries it, Ben's does not.
    w.server.queueGenerate({ text: 'Hello, Ben.' })
    expect((await ben.say(r.conversation, 'And me?')).text).toBe('Hello, Ben.')
    await until(() => messagesIn(annaSaw, r.conversation).length >= 2, "anna to see ben's turn")
    const stored = w.store.messages(r.conversation).map((m) => ('text' in m ? m.text : m.role))
    expect(stored).toEqual(['Hello?', 'Hello, Anna.', 'And me?', 'Hello, Ben.'])
    const texts = (seen: FollowEvent[]) =>
      messagesIn(seen, r.conversation).map(
        (e) => (e.body as { message: { text: string } }).message.text,
      )
    expect(texts(benSaw)).toEqual(['Hello?', 'Hello, Anna.'])
    expect(texts(annaSaw)).toEqual(['And me?', 'Hello, Ben.'])
    await annaFollow.stop()
    await benFollow.stop()
  })
})
