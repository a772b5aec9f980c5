import { afterEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer, type Script } from '../../src/testing/fake-live-server/index.js'
import { DEFAULT_CONFIRM_PHRASES } from '../../src/voice/wake-confirmation.js'
import { until } from '../helpers/wait.js'
import { wakeWorld } from './wake-world.js'

/**
 * Issue 22 item 4, the second opinion: after a local wake the session opens but the speaker stays
 * silent until the model's own input transcription (the real SDK, the fake Live service
 * transcribing what it heard) has the wake phrase in it. Without it, the session closes without a
 * word: nothing but the earcon played, no conversation kept, the LED back to idle, one false wake.
 */
describe('the second opinion on a local wake', () => {
  const closers: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c()
  })

  async function world(scene: Script, confirm?: false) {
    const server = await FakeLiveServer.start({ scripts: [scene], logger: silentLogger })
    closers.push(() => server.close())
    const w = await wakeWorld(server, confirm === false ? { confirm } : {})
    closers.push(() => w.close())
    return { server, w }
  }

  /** The model hears `heard` in the audio, and answers out loud (and calls nothing). */
  const answering = (heard: string): Script => ({
    steps: [
      { transcribe: heard, afterAudioMs: 500 },
      { speak: 'time', chunkMs: 40 },
      { send: { serverContent: { turnComplete: true } } },
    ],
  })

  it('closes without a word when the model did not hear the wake phrase', async () => {
    const { server, w } = await world(answering('what time is it'))
    await w.sayWake()
    await until(() => w.summaries.length > 0, 'w.summaries.length > 0', 60_000)
    const [summary] = w.summaries
    expect(summary?.reason).toBe('unconfirmed')
    // The earcon, and not one byte of the model's reply.
    expect(w.speaker.writtenBytes).toBe(w.earcon.byteLength)
    expect(w.store.listConversations()).toEqual([])
    expect(w.falseWakes()).toBe(1)
    expect(w.states.at(-1)).toBe('idle')
    expect(w.states).not.toContain('speaking')
    // The service was asked to transcribe and did: this is its transcription the session read.
    expect(server.connections[0]?.setup?.inputAudioTranscription).toEqual({})
    expect(server.errors).toEqual([])
    expect(w.log.withEvent('false_wake')).toHaveLength(1)
  }, 20_000)

  it('keeps nothing of a session that ends for another reason while the wake is unconfirmed', async () => {
    // The model would hear "what time is it" only after 5 s, and has 10 s to confirm; the service
    // is stopped well before either.
    const server = await FakeLiveServer.start({
      scripts: [{ steps: [{ transcribe: 'what time is it', afterAudioMs: 5000 }] }],
      logger: silentLogger,
    })
    closers.push(() => server.close())
    const w = await wakeWorld(server, {
      confirm: { phrases: DEFAULT_CONFIRM_PHRASES, withinMs: 10_000 },
    })
    closers.push(() => w.close())
    await w.sayWake()
    await server.waitForConnection(0, 5000)
    await until(
      () => (server.connections[0]?.heardAudio().byteLength ?? 0) > 0,
      '(server.connections[0]?.heardAudio().byteLength ?? 0) > 0',
      60_000,
    )
    expect(w.store.listConversations()).toHaveLength(1)
    await w.driver.stop()
    await until(() => w.summaries.length > 0, 'w.summaries.length > 0', 60_000)
    expect(w.summaries[0]).toMatchObject({ reason: 'stopped', unconfirmed: true })
    expect(w.store.listConversations()).toEqual([])
    // Not counted as a false wake: the model never said it was not the phrase.
    expect(w.falseWakes()).toBe(0)
  }, 20_000)

  it('speaks once the model’s transcription has the phrase, whatever its case and commas', async () => {
    const { server, w } = await world(answering(' Hey, Jarvis! What time is it?'))
    await w.sayWake()
    await until(
      () => w.speaker.writtenBytes > w.earcon.byteLength,
      'w.speaker.writtenBytes > w.earcon.byteLength',
      60_000,
    )
    await server.until(() => server.connections[0]?.finished)
    await until(() => w.states.includes('speaking'), "w.states.includes('speaking')", 60_000)
    expect(w.summaries).toEqual([])
    await w.loop.stop()
    const [c] = w.store.listConversations()
    expect(c).toBeDefined()
    const said = w.store.messages(c?.id ?? '').map((m) => `${m.role}: ${'text' in m ? m.text : ''}`)
    expect(said[0]).toBe('user: Hey, Jarvis! What time is it?')
    expect(w.falseWakes()).toBe(0)
  }, 20_000)

  it('can be turned off: the local wake is believed and the model answers at once', async () => {
    const { w } = await world(answering('what time is it'), false)
    await w.sayWake()
    await until(
      () => w.speaker.writtenBytes > w.earcon.byteLength,
      'w.speaker.writtenBytes > w.earcon.byteLength',
      60_000,
    )
    expect(w.summaries).toEqual([])
    expect(w.falseWakes()).toBe(0)
  }, 20_000)
})
