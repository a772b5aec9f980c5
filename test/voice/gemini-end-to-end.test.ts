import { afterEach, describe, expect, it } from 'vitest'
import { FakeLiveServer, serverFrame } from '../../src/testing/fake-live-server/index.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { tick } from '../helpers/wait.js'
import { geminiVoiceFixture } from './harness.js'

let server: FakeLiveServer
afterEach(async () => server?.close())

async function fixture() {
  server = await FakeLiveServer.start()
  return geminiVoiceFixture(server)
}

describe('voice driver over the real SDK: GeminiLive against the fake Live server', () => {
  it('approval: interim at once, final with INTERRUPT', async () => {
    const v = await fixture()
    v.conn.user('Unlock the front door.')
    v.conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    await server.until(() => v.conn.responses.length === 1)
    expect(v.conn.responses[0]).toMatchObject({ id: 'c1', willContinue: true })
    v.conn.model('I have asked Anna.')
    v.conn.audio(200)
    v.conn.turnComplete()
    await tick()
    await settle()
    v.approver.last().answer({ decision: 'approve', by: 'phone-a' })
    await settle()
    await server.until(() => v.conn.responses.length === 2)
    expect(v.conn.responses).toEqual([
      expect.objectContaining({ id: 'c1', willContinue: true }),
      {
        id: 'c1',
        name: 'unlock_door',
        response: { output: { unlocked: 'front' } },
        scheduling: 'INTERRUPT',
        willContinue: false,
      },
    ])
    expect(server.connections[0]?.setup?.tools).toBeDefined()
    await v.driver.stop()
    await v.done
  })

  it('withdrawal: approval withdrawn, nothing more sent', async () => {
    const v = await fixture()
    v.conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
    await server.until(() => v.conn.responses.length === 1)
    await settle()
    const asked = v.approver.last()
    v.conn.cancel('c1')
    await tick()
    await settle()
    expect(asked.withdrawn).toBe(true)
    asked.answer({ decision: 'approve', by: 'phone-a' })
    await v.clock.advance(60_000)
    await tick()
    expect(v.unlocked).toEqual([])
    expect(v.conn.responses.map((r) => [r.id, r.willContinue])).toEqual([['c1', true]])
    await v.driver.stop()
    await v.done
  })

  it('barge-in: speaker dropped at once', async () => {
    const v = await fixture()
    v.conn.user('Tell me a story.')
    v.conn.model('Once upon a time')
    v.conn.audio(3000)
    await tick()
    await v.clock.advance(500)
    const playedBefore = v.speaker.playedBytes()
    v.conn.interrupted()
    await tick()
    expect(v.speaker.drops).toHaveLength(1)
    expect(v.speaker.drops[0]?.discardedMs).toBeGreaterThan(2000)
    expect(v.speaker.queuedMs()).toBe(0)
    // Nothing more plays after the drop, however long the room waits.
    await v.clock.advance(3000)
    expect(v.speaker.playedBytes()).toBe(playedBefore)
    await v.driver.stop()
    await v.done
  })

  it('resumption: goAway between turns closes first and resumes with the handle, no history', async () => {
    const v = await fixture()
    v.conn.handle('h-1')
    v.conn.goAway(20_000)
    await server.waitForConnection(1)
    const t = server.timeline
    expect(t.findIndex((e) => e.conn === 0 && e.event === 'close')).toBeLessThan(
      t.findIndex((e) => e.conn === 1 && e.event === 'open'),
    )
    expect(server.connections[1]?.setup?.sessionResumption).toEqual({ handle: 'h-1' })
    expect(server.framesOf('clientContent', 1)).toEqual([])
    await v.driver.stop()
    await v.done
  })
})

describe('what a spoken session cost (issue 27: no stub left as done)', () => {
  it('the usage of every turn, parsed by the real SDK, is summed and kept beside the conversation', async () => {
    const v = await fixture()
    v.conn.user('What time is it?')
    v.conn.model('It is noon.')
    v.conn.send(serverFrame.turnComplete(546))
    v.conn.user('And tomorrow?')
    v.conn.model('Also noon.')
    v.conn.send(serverFrame.turnComplete(612))
    await tick()
    await settle()
    await v.driver.stop()
    const summary = await v.done
    expect(summary.tokens).toBe(546 + 612)
    expect(v.store.usage({ conversationId: summary.conversationId })).toBe(1158)
    expect(v.store.usage({ since: 0 })).toBe(1158)
    // Deleting the chat keeps what it cost in the month's total: it was billed all the same.
    v.store.deleteConversation(summary.conversationId)
    expect(v.store.usage({ since: 0 })).toBe(1158)
    expect(v.store.usage({ since: v.clock.now() + 1 })).toBe(0)
  })
})
