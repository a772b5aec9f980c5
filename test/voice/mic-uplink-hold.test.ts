import { describe, expect, it } from 'vitest'
import type { LiveSession } from '../../src/ports/live-llm.js'
import type { PhraseCheck, PhraseVerdict } from '../../src/ports/phrase-check.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { MicUplink } from '../../src/voice/mic-uplink.js'

/** A phrase check below its port: answers when the test says, and keeps what it was given. */
function pendingCheck() {
  let answer!: (v: PhraseVerdict) => void
  let fail!: (e: Error) => void
  const given: Uint8Array[] = []
  const check: PhraseCheck = {
    check: (pcm) => {
      given.push(pcm)
      return new Promise((res, rej) => {
        answer = res
        fail = rej
      })
    },
    close: async () => {},
  }
  return {
    check,
    given,
    agree: () => answer({ agreed: true, heard: ['hey jarvis'], ms: 90 }),
    refuse: () => answer({ agreed: false, heard: [], ms: 90 }),
    fail: () => fail(new Error('pocketsphinx_continuous could not run: ENOENT')),
  }
}

/** An uplink on an open connection that records every frame it was sent, by its first byte. */
function uplink() {
  const sent: number[] = []
  const session: LiveSession = {
    sendAudio: (pcm) => {
      sent.push(pcm[0] as number)
    },
    endAudio: () => {},
    respond: () => {},
    playbackCut: () => {},
    close: async () => {},
  }
  const log = new MemoryLogger()
  const up = new MicUplink({
    gapBufferMs: 5000,
    log,
    live: () => session,
    isMuted: () => false,
    ending: () => false,
  })
  let refused = 0
  return { up, sent, log, session, refused: () => refused, onRefused: () => refused++ }
}

const frame = (n: number) => new Uint8Array(640).fill(n)

describe('MicUplink holds the microphone until the local check of the phrase agrees', () => {
  it('agreed: nothing went while it checked, then the pre-roll first and every frame in order', async () => {
    const u = uplink()
    const c = pendingCheck()
    u.up.preRoll([frame(1)], { check: c.check, refused: u.onRefused })
    u.up.opened()
    u.up.flushGap(u.session)
    u.up.frame(frame(2))
    u.up.frame(frame(3))
    expect(u.sent).toEqual([])
    expect(c.given.map((p) => p[0])).toEqual([1])
    c.agree()
    await Promise.resolve()
    u.up.frame(frame(4))
    expect(u.sent).toEqual([1, 2, 3, 4])
    expect(u.log.withEvent('wake_checked')).toHaveLength(1)
  })

  it('refused: nothing is ever sent, the session is told, and it is logged', async () => {
    const u = uplink()
    const c = pendingCheck()
    u.up.preRoll([frame(1)], { check: c.check, refused: u.onRefused })
    u.up.frame(frame(2))
    c.refuse()
    await Promise.resolve()
    u.up.frame(frame(3))
    u.up.flushGap(u.session)
    expect(u.sent).toEqual([])
    expect(u.refused()).toBe(1)
    expect(u.log.withEvent('wake_refused_locally').map((r) => r.fields.ms)).toEqual([90])
  })

  it('a check that cannot run lets the wake through, with a warning', async () => {
    const u = uplink()
    const c = pendingCheck()
    u.up.preRoll([frame(1)], { check: c.check, refused: u.onRefused })
    u.up.frame(frame(2))
    c.fail()
    await new Promise((r) => setImmediate(r))
    expect(u.sent).toEqual([1, 2])
    expect(u.refused()).toBe(0)
    const [warn] = u.log.withEvent('wake_check_failed')
    expect([warn?.level, String(warn?.fields.err)]).toEqual([
      'warn',
      expect.stringContaining('ENOENT'),
    ])
  })

  it('with a window past the detection: the check hears the pre-roll and what followed, held meanwhile', async () => {
    const u = uplink()
    const c = pendingCheck()
    // 640-byte frames are 20 ms each: a 50 ms window waits for three of them.
    u.up.preRoll([frame(1)], { check: c.check, afterMs: 50, refused: u.onRefused })
    u.up.frame(frame(2))
    u.up.frame(frame(3))
    expect(c.given).toEqual([])
    u.up.frame(frame(4))
    expect(c.given.map((p) => [...new Set(p)])).toEqual([[1, 2, 3, 4]])
    expect(c.given[0]?.byteLength).toBe(4 * 640)
    u.up.frame(frame(5))
    expect(u.sent).toEqual([])
    c.agree()
    await Promise.resolve()
    expect(u.sent).toEqual([1, 2, 3, 4, 5])
  })
})
