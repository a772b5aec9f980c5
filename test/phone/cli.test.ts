import { describe, expect, it } from 'vitest'
import { phone } from '../../src/app/commands/phone.js'
import { aedesBroker } from '../helpers/brokers.js'
import { captureIo } from '../helpers/capture-io.js'
import { until } from '../helpers/wait.js'
import { worldsOn } from './world.js'

describe('nocturn phone: conversations, show, say, follow', () => {
  const worlds = worldsOn(aedesBroker)

  it('lists, reads, types and follows through the reference client', async () => {
    const w = await worlds.open()
    const env = w.phoneEnv('anna')
    const c = w.feed.createConversation({ channel: 'voice', at: Date.now() })
    w.feed.append(c.id, { role: 'user', text: 'Is it raining?', channel: 'voice', at: Date.now() })
    w.feed.append(c.id, {
      role: 'assistant',
      text: 'No.',
      toolCalls: [],
      channel: 'voice',
      at: Date.now(),
    })

    const list = captureIo(env)
    expect(await phone(['conversations'], list.io)).toBe(0)
    expect(list.text.out).toMatch(new RegExp(`^${c.id}  voice .* Is it raining\\?\\n$`))

    const show = captureIo(env)
    expect(await phone(['show', c.id], show.io)).toBe(0)
    expect(show.text.out).toBe('   1 voice user      Is it raining?\n   2 voice assistant No.\n')

    w.server.queueGenerate({ text: 'Still dry, and likely to stay so tonight.' })
    const say = captureIo(env)
    expect(await phone(['say', c.id, 'And later?'], say.io)).toBe(0)
    expect(say.text.out).toBe(`Still dry, and likely to stay so tonight.\n(conversation ${c.id})\n`)

    // The list now says who typed in the chat: the phone that said "And later?".
    const again = captureIo(env)
    expect(await phone(['conversations'], again.io)).toBe(0)
    expect(again.text.out).toMatch(
      new RegExp(`^${c.id}  voice .* Is it raining\\?  \\(typed by anna\\)\\n$`),
    )

    const missing = captureIo(env)
    expect(await phone(['say', 'no-such-thing', 'hello'], missing.io)).toBe(1)
    expect(missing.text.err).toMatch(/refused \(NOC_ERR_NOT_FOUND\)/)

    const follow = captureIo(env)
    const stop = new AbortController()
    const following = phone(['follow', c.id], follow.io, stop.signal)
    await until(() => w.logger.entries.some((e) => e.fields.op === 'follow') === true, 'follow')
    await new Promise((r) => setTimeout(r, 50))
    w.feed.append(c.id, { role: 'user', text: 'Thanks.', channel: 'voice', at: Date.now() })
    await until(() => follow.text.out.includes('Thanks.'), 'the followed message')
    stop.abort()
    expect(await following).toBe(0)
    expect(follow.text.out).toBe(`${c.id}     5 voice user      Thanks.\n`)
  })
})
