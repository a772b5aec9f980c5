import { describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { silentLogger } from '../../src/core/logger.js'
import { serveWakes } from '../../src/device/wake-endpoint.js'
import { WakeLog } from '../../src/device/wake-log.js'
import type { WakeLesson } from '../../src/ports/wake-log.js'
import type { WakeTeacher } from '../../src/ports/wake-teacher.js'
import type { SessionSummary } from '../../src/voice/session-types.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { openTab, shownText } from './app-harness.js'
import { missingChromium } from './browser.js'
import { storedExchange } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()

/** What a household must never read (as test/web/household-words.test.ts checks every screen). */
const CODE_WORDS = /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/
const RAW_TIMES = [/\b\d{10,13}\b/, /\d{4}-\d\d-\d\dT\d\d/, /\b\d{1,2}:\d\d:\d\d\b/, /0\.\d{3}/]

/** The verifier below its port: it hands out windows and keeps every lesson it was given. */
function recordingTeacher() {
  const lessons: { phrase: string; lesson: WakeLesson }[] = []
  const teacher: WakeTeacher = {
    windowsAround: () => [new Float32Array(1536).fill(0.5), new Float32Array(1536).fill(0.25)],
    bestRecent: () => ({ phrase: 'hey jarvis', score: 0.31, windows: [new Float32Array(1536)] }),
    teach: async (phrase, lesson) => {
      lessons.push({ phrase, lesson })
      return {
        learnt: true,
        negatives: lesson.negatives.length,
        positives: 0,
        refused: 2,
        cpuMs: 1,
      }
    },
  }
  return { teacher, lessons }
}

const summary = (conversationId: string, unconfirmed: boolean): SessionSummary => ({
  conversationId,
  reason: unconfirmed ? 'unconfirmed' : 'idle',
  startedAt: Date.now() - 5000,
  endedAt: Date.now(),
  turns: unconfirmed ? 0 : 1,
  calls: { answered: 0, withdrawn: 0 },
  resumptions: 0,
  freshConnections: 1,
  messagesWritten: unconfirmed ? 0 : 2,
  unconfirmed,
  tokens: 0,
})

/**
 * Issue 46 item 5, on the phone: the Speakers card lists a speaker's recent wakes in the
 * household's words (when, how sure, whether it heard the phrase, what was said), and a tap on
 * "That wasn't me" sends a signed mark that the speaker learns from; "It missed me just now" is
 * a note of its own. The device side is the real wake log, endpoint and store on the real
 * Mosquitto; the verifier is below its port.
 */
describe.skipIf(skip !== undefined)('recent wakes on the phone', { timeout: 90_000 }, () => {
  const suite = webSuite()

  it('lists the wakes in words; "That wasn\'t me" teaches the speaker and shows the mark', async () => {
    const w = await suite.world()
    const { teacher, lessons } = recordingTeacher()
    const log = new WakeLog({
      store: w.store.wakes,
      transcripts: w.store,
      clock: realClock(),
      logger: silentLogger,
      confirmAsked: true,
    })
    log.useTeacher(teacher)
    serveWakes(w.endpoint, log)
    // The household's own wake, confirmed, and then a false one the model heard no phrase in.
    const own = { phrase: 'hey jarvis', score: 0.96, heardAtMs: 1, levelDb: -30 }
    log.detected(own)
    log.heard({ cause: 'wake', preRoll: new Uint8Array(), atMs: 1, wake: own }, false)
    log.ended(summary(storedExchange(w, 'hey jarvis, what time is it?', 'Ten past nine.'), false))
    const wrong = { phrase: 'hey jarvis', score: 0.62, heardAtMs: 2, levelDb: -30 }
    log.detected(wrong)
    log.heard({ cause: 'wake', preRoll: new Uint8Array(), atMs: 2, wake: wrong }, false)
    // The speaker's own check, in shadow, did not hear the phrase in it either.
    log.checkedLocally(false)
    log.ended(summary('none', true))
    w.deviceState.setWakeCheck({ state: 'shadow', streak: 3, of: 5, kept: 1 })
    await until(() => log.list({ limit: 5 }).every((x) => x.windows === 2), 'the features kept')

    const anna = await suite.phone('anna', w)
    await openTab(anna.page, 'speakers')
    const card = anna.page.locator(`[data-speaker="${w.deviceId}"]`)
    await card.locator('[data-wakes] summary').click()
    const items = card.locator('[data-wake]')
    await items.nth(1).waitFor()
    const shown = await shownText(card.locator('[data-wakes]'))
    expect(shown).not.toMatch(CODE_WORDS)
    for (const raw of RAW_TIMES) expect(shown).not.toMatch(raw)
    expect(await shownText(items.nth(0))).toMatch(
      /^Today \d{1,2}:\d\d( [AP]M)? · not very sure\s+It thought it heard "hey jarvis", but nobody said it\.\s+Its own check on the speaker did not hear the phrase either\./,
    )
    // Where its own check stands: learning, 3 of the 5 wakes in a row it needs.
    expect(await shownText(card.locator('[data-wake-check]'))).toContain(
      'it has heard it with you 3 of the 5 times in a row it needs',
    )
    expect(await items.nth(1).locator('[data-local]').count()).toBe(0)
    expect(await shownText(items.nth(1))).toMatch(
      /· very sure\s+It heard "hey jarvis" and you said: "Hey jarvis, what time is it\?"/,
    )

    await items
      .nth(0)
      .getByRole('button', { name: /^That wasn't me/ })
      .click()
    await card.locator('[data-wake] [data-marked]').waitFor()
    expect(await shownText(card.locator('[data-wake-outcome]'))).toContain(
      'learnt from it: it will not wake on that again',
    )
    expect(await shownText(items.nth(0))).toContain('Marked "that wasn\'t me" on this phone.')
    // The speaker learnt from the marked wake's windows, and from its own confirmed one.
    expect(
      lessons.map((x) => [x.phrase, x.lesson.negatives.length, x.lesson.positives.length]),
    ).toEqual([['hey jarvis', 2, 2]])
    expect(w.store.wakes.wakes({ limit: 5 })[0]).toMatchObject({ mark: 'not_me', markedBy: 'anna' })

    await card.getByRole('button', { name: 'It missed me just now' }).click()
    await until(() => log.list({ limit: 5 }).length === 3, 'the missed wake noted')
    await card.locator('[data-wake]', { hasText: 'You said it missed you.' }).waitFor()
    expect(lessons.at(-1)?.lesson.positives).toHaveLength(3)
  })
})
