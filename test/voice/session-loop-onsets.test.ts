import { describe, expect, it } from 'vitest'
import { MicRouter } from '../../src/audio/mic-router.js'
import { LiveConversations } from '../../src/conversations/live-conversations.js'
import type { Onset } from '../../src/ports/onset.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { SessionLoop } from '../../src/voice/session-loop.js'

/**
 * Which onsets the session loop takes, against a voice driver below its interface: none while
 * muted (a wake scored or claimed from audio heard before the press, told after it), none into a
 * session that is closing (no earcon for words nobody will hear), and the mute itself rearms the
 * onset source, so what it was still scoring is dropped at the press.
 */
describe('the session loop’s onsets', () => {
  async function rig(o: { sessionRunning?: boolean; live?: boolean } = {}) {
    const log = new MemoryLogger()
    let tell: ((onset: Onset) => void) | undefined
    let muteListener: ((muted: boolean) => void) | undefined
    const seen = { rearms: 0, sessions: 0, bargeIns: 0, heard: [] as string[] }
    const driver = {
      muted: false,
      sessionRunning: o.sessionRunning ?? false,
      onMuted: (l: (muted: boolean) => void) => {
        muteListener = l
      },
      stop: async () => {},
      bargeIn: () => {
        seen.bargeIns++
        return o.live ?? false
      },
      runSession: async () => {
        seen.sessions++
        return new Promise<never>(() => {})
      },
    }
    const loop = new SessionLoop({
      router: new MicRouter({
        sampleRateHz: 16_000,
        start: async () => {},
        stop: async () => {},
        setMuted: () => {},
      }),
      onset: {
        listen: (l) => {
          tell = l
        },
        rearm: () => seen.rearms++,
        close: () => {},
      },
      driver,
      live: new LiveConversations(),
      logger: log,
      clock: new VirtualClock(),
      heard: (onset) => seen.heard.push(onset.cause),
    })
    await loop.start()
    const wake: Onset = { cause: 'wake', preRoll: new Uint8Array(640), atMs: 0 }
    return {
      log,
      seen,
      driver,
      tell: (onset: Onset = wake) => tell?.(onset),
      mute: (muted: boolean) => {
        driver.muted = muted
        muteListener?.(muted)
      },
    }
  }

  it('takes nothing while muted, and rearms its source at the press', async () => {
    const r = await rig()
    r.mute(true)
    expect(r.seen.rearms).toBe(1)
    r.tell()
    r.tell({ cause: 'button', preRoll: new Uint8Array(640), atMs: 0 })
    expect(r.seen).toMatchObject({ sessions: 0, heard: [] })
    expect(r.log.records.filter((x) => x.msg === 'heard while muted: not taken')).toHaveLength(2)
    // Unmuting rearms nothing more; the next wake opens a session, with its earcon.
    r.mute(false)
    expect(r.seen.rearms).toBe(1)
    r.tell()
    expect(r.seen).toMatchObject({ sessions: 1, heard: ['wake'] })
  })

  it('plays no earcon into a session that is closing, and barges in on a live one', async () => {
    const closing = await rig({ sessionRunning: true, live: false })
    closing.tell()
    expect(closing.seen).toMatchObject({ bargeIns: 1, sessions: 0, heard: [] })
    expect(closing.log.records.map((x) => x.msg)).toContain(
      'heard while a session closes: not taken',
    )
    const live = await rig({ sessionRunning: true, live: true })
    live.tell()
    expect(live.seen).toMatchObject({ bargeIns: 1, sessions: 0, heard: ['wake'] })
  })
})
