import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { GeminiLive } from '../../src/adapters/gemini/gemini-live.js'
import { MicGate } from '../../src/audio/mic-gate.js'
import { defaultPersona } from '../../src/core/persona.js'
import { ToolSet } from '../../src/core/tool-set.js'
import { FakeLiveServer, MALFORMED_FRAMES } from '../../src/testing/fake-live-server/index.js'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { VoiceDriver } from '../../src/voice/voice-driver.js'
import { coreFixture } from '../helpers/core.js'
import { doorTool, TestMic, timeTool } from './harness.js'

let server: FakeLiveServer | undefined
afterEach(async () => server?.close())

const tick = () => new Promise((r) => setTimeout(r, 30))

describe('a malformed Live frame costs itself, never the frames after it', () => {
  it('after a burst of malformed frames mid-turn, the next speech is played and the goAway honoured at the turn’s end', async () => {
    server = await FakeLiveServer.start()
    const core = coreFixture({ timeoutMs: 120_000 })
    const speaker = new FakeSpeaker(core.clock)
    const source = new TestMic()
    const mic = new MicGate({ source, speaker, clock: core.clock, echo: 'aec', tailMs: 300 })
    const log = new MemoryLogger()
    const llm = new GeminiLive({
      apiKey: 'k',
      model: 'gemini-2.5-flash-native-audio-preview-12-2025',
      baseUrl: server.baseUrl,
      logger: log,
      clock: realClock(),
    })
    const driver = new VoiceDriver({
      llm,
      tools: new ToolSet([doorTool([]), timeTool]),
      gate: core.gate,
      store: core.store,
      persona: defaultPersona,
      clock: core.clock,
      logger: log,
      mic,
      speaker,
      options: { idleMs: 10 * 60_000, budgetMs: 30 * 60_000 },
    })
    const done = driver.runSession()
    const conn = await server.waitForConnection(0)
    await tick()
    await settle()
    // A resumable session: a goAway, however malformed, has something to resume.
    conn.handle('h-1')
    conn.user('What time is it?')
    for (const raw of MALFORMED_FRAMES) conn.sendRaw(raw, true)
    await server.until(() => log.records.filter((r) => r.fields.event === 'go_away').length === 2)
    // Whatever timers are due run now, as they would on a real clock before the next frame.
    await core.clock.advance(10)
    await tick()
    conn.model('It is noon.')
    conn.audio(400)
    conn.turnComplete()
    await server.until(() => speaker.writtenBytes === 400 * 48).catch(() => undefined)
    expect(speaker.writtenBytes).toBe(400 * 48)
    // Each malformed frame was warned about where it was dropped.
    expect(log.records.filter((r) => r.level === 'warn').length).toBeGreaterThanOrEqual(
      MALFORMED_FRAMES.length,
    )
    // The goAway still counts: the driver resumes once the reply is complete.
    const resumed = await server.waitForConnection(1)
    expect(resumed.setup?.sessionResumption).toEqual({ handle: 'h-1' })
    expect(driver.state).not.toBe('error')
    await driver.stop()
    expect((await done).reason).toBe('stopped')
  })
})
