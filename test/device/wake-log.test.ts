import { describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { isNocturnError } from '../../src/core/errors.js'
import { WakeLog } from '../../src/device/wake-log.js'
import type { Onset } from '../../src/ports/onset.js'
import type { WakeLesson } from '../../src/ports/wake-log.js'
import type { WakeTeacher } from '../../src/ports/wake-teacher.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import type { SessionSummary } from '../../src/voice/session-types.js'

const window = (v: number) => new Float32Array(1536).fill(v)

/** The verifier below its port: windows by when they were asked for, every lesson kept. */
function teacher() {
  const lessons: WakeLesson[] = []
  const asked: [number, number][] = []
  const t: WakeTeacher = {
    windowsAround: (_p, from, to) => {
      asked.push([from, to])
      return [window(from), window(to)]
    },
    bestRecent: () => ({ phrase: 'hey jarvis', score: 0.4, windows: [window(9)] }),
    teach: async (_phrase, lesson) => {
      lessons.push(lesson)
      return {
        learnt: true,
        negatives: lesson.negatives.length,
        positives: 0,
        refused: 0,
        cpuMs: 1,
      }
    },
  }
  return { t, lessons, asked }
}

function world(confirmAsked = true) {
  const clock = new VirtualClock()
  const store = new SqliteStore(':memory:')
  const logger = new MemoryLogger()
  const log = new WakeLog({ store: store.wakes, transcripts: store, clock, logger, confirmAsked })
  const { t, lessons, asked } = teacher()
  log.useTeacher(t)
  let n = 0
  /** A wake detected and opening a session (or talking over one). */
  const wake = (score: number, bargeIn = false) => {
    const d: WakeDetection = { phrase: 'hey jarvis', score, heardAtMs: ++n, levelDb: -30 }
    log.detected(d)
    const onset: Onset = { cause: 'wake', preRoll: new Uint8Array(), atMs: n, wake: d }
    log.heard(onset, bargeIn)
  }
  const ended = (conversationId: string, unconfirmed: boolean): SessionSummary => {
    const s: SessionSummary = {
      conversationId,
      reason: unconfirmed ? 'unconfirmed' : 'idle',
      startedAt: 0,
      endedAt: 1,
      turns: 1,
      calls: { answered: 0, withdrawn: 0 },
      resumptions: 0,
      freshConnections: 1,
      messagesWritten: 1,
      unconfirmed,
      tokens: 0,
    }
    log.ended(s)
    return s
  }
  return { clock, store, log, logger, wake, ended, lessons, asked }
}

describe('the wake log', () => {
  it('keeps each wake with the second opinion, the first words heard, and the windows around it', async () => {
    const w = world()
    const c = w.store.createConversation({ channel: 'voice', at: w.clock.now() })
    w.store.append(c.id, {
      role: 'user',
      text: 'hey jarvis what is the weather going to be like tomorrow in town',
      channel: 'voice',
      at: w.clock.now(),
    })
    const t0 = w.clock.now()
    w.wake(0.93)
    expect(w.log.list({ limit: 5 })).toMatchObject([{ confirmed: 'pending', windows: 0 }])
    w.ended(c.id, false)
    w.wake(0.6)
    w.ended('none', true)
    // A wake over a reply is judged by nobody.
    w.wake(0.8, true)
    await w.clock.advance(1300)
    const [over, wrong, own] = w.log.list({ limit: 5 })
    expect(own).toMatchObject({ kind: 'wake', score: 0.93, confirmed: 'yes', windows: 2 })
    expect(own?.said).toBe('hey jarvis what is the weather going to…')
    expect(wrong).toMatchObject({ confirmed: 'no', windows: 2 })
    expect(wrong?.said).toBeUndefined()
    expect(over).toMatchObject({ confirmed: 'not_asked' })
    // From 1 s before the wake was told to 1.2 s after it, read once that much has been scored.
    expect(w.asked[0]).toEqual([t0 - 1000, t0 + 1200])
  })

  it('without a second opinion every wake is "not asked"', async () => {
    const w = world(false)
    w.wake(0.9)
    w.ended('x', false)
    expect(w.log.list({ limit: 1 })[0]?.confirmed).toBe('not_asked')
  })

  it('a mark teaches with every marked window as a negative and the confirmed wakes and missed notes as positives', async () => {
    const w = world()
    w.wake(0.95)
    w.ended('none-own', false)
    w.wake(0.6)
    w.ended('none', true)
    await w.clock.advance(1300)
    const wrong = w.log.list({ limit: 1 })[0]
    const r = await w.log.mark(wrong?.id ?? 0, 'not_me', 'anna')
    expect(r.wake).toMatchObject({ mark: 'not_me', markedBy: 'anna' })
    expect(r.outcome).toMatchObject({ learnt: true, negatives: 2 })
    expect(w.lessons.map((l) => [l.negatives.length, l.positives.length])).toEqual([[2, 2]])
    const missed = await w.log.missed('ben')
    expect(missed.wake).toMatchObject({ kind: 'missed', score: 0.4, windows: 1 })
    expect(w.lessons.at(-1)?.positives).toHaveLength(3)
    expect(w.logger.withEvent('wake_log_failed')).toEqual([])
  })

  it('an unknown wake cannot be marked; a wake with no features is kept marked and teaches nothing', async () => {
    const w = world()
    await expect(w.log.mark(404, 'not_me', 'anna')).rejects.toSatisfy(
      (e: unknown) => isNocturnError(e) && e.code === 'NOC_ERR_NOT_FOUND',
    )
    w.wake(0.7)
    const r = await w.log.mark(w.log.list({ limit: 1 })[0]?.id ?? 0, 'not_me', 'anna')
    expect(r.outcome).toEqual({
      learnt: false,
      why: 'no features were kept of this wake to learn from (a phrase keeps them once it has a household verifier: nocturn wake enroll)',
    })
    expect(w.lessons).toEqual([])
  })

  it('keeps the newest 100, none older than 14 days', async () => {
    const w = world()
    for (let i = 0; i < 105; i++) w.wake(0.5)
    expect(w.log.list({ limit: 200 })).toHaveLength(100)
    w.clock.stepWall(15 * 24 * 3600_000)
    w.wake(0.5)
    expect(w.log.list({ limit: 200 })).toHaveLength(1)
  })
})
