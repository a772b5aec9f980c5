import { afterEach, describe, expect, it } from 'vitest'
import { FakeLiveServer, MALFORMED_FRAMES } from '../../src/testing/fake-live-server/index.js'
import { tick } from '../helpers/wait.js'
import { geminiVoiceFixture } from './harness.js'

let server: FakeLiveServer | undefined
afterEach(async () => server?.close())

describe('a malformed Live frame costs itself, never the frames after it', () => {
  it('after a burst of malformed frames mid-turn, the next speech is played and the goAway honoured at the turn’s end', async () => {
    server = await FakeLiveServer.start()
    const { clock, speaker, log, driver, done, conn } = await geminiVoiceFixture(server)
    // A resumable session: a goAway, however malformed, has something to resume.
    conn.handle('h-1')
    conn.user('What time is it?')
    for (const raw of MALFORMED_FRAMES) conn.sendRaw(raw, true)
    await server.until(() => log.records.filter((r) => r.fields.event === 'go_away').length === 2)
    // Whatever timers are due run now, as they would on a real clock before the next frame.
    await clock.advance(10)
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
