import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import {
  DEBIAN_MODEL_DIR,
  DEFAULT_MARGIN,
  DEFAULT_THRESHOLD,
  KeyphraseCheck,
} from '../../src/adapters/pocketsphinx/keyphrase-check.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { parseWav } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { DeviceState } from '../../src/device/device-state.js'
import { WakeCheckTrust } from '../../src/device/wake-check-trust.js'
import type { PhraseCheck } from '../../src/ports/phrase-check.js'
import { FakeLiveServer, type Script } from '../../src/testing/fake-live-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { DEFAULT_CONFIRM_PHRASES } from '../../src/voice/wake-confirmation.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands, systemSkip } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { FIXTURES, wavPcm } from '../helpers/wake.js'
import { answering, arecordOnFifo, realWakeWorld } from './wake-world.js'

const ROOT = join(import.meta.dirname, '../..')
const MODEL = join(DEBIAN_MODEL_DIR, 'en-us', 'mdef')
const skip =
  missingCommands('arecord', 'pocketsphinx_continuous') ??
  (existsSync(MODEL) ? undefined : systemSkip([MODEL]))

/**
 * Issue 46 item 1: the local second opinion, end to end. The real `arecord` on a FIFO fed at the
 * pace of real time, the REAL openWakeWord detector (the pretrained hey_jarvis head, default
 * threshold, native runtime), the real pocketsphinx check on the pre-roll, the real SDK against
 * the fake Live service. flite's kal16 voice saying "hey jarvish" makes the head fire (0.998 on
 * the committed clip): the local check refuses it, and not one byte of audio reaches the service,
 * though its connection may have opened in parallel; the session ends as an unconfirmed wake. So
 * does another voice's "hey jarvish" (flite rms), which the phrase alone at 1e-12 let through:
 * weighed against the names it is confused with, "hey jarvish" itself wins over the same stretch.
 * The same voice saying "hey jarvis", and a command, goes through: the model hears it and answers.
 */
describe.skipIf(skip)('the local second opinion, before anything leaves the room', () => {
  it('a near-miss that fires the head sends no audio; the wake phrase still goes through', async () => {
    const { alsa, mic, wake } = arecordOnFifo()
    const server = await FakeLiveServer.start({ logger: silentLogger, scripts: () => answering() })
    // As composed by default: weighed against its competitors, hearing 200 ms past the detection.
    const local = KeyphraseCheck.create({
      phrases: ['hey jarvis'],
      threshold: DEFAULT_THRESHOLD.weighed,
      competitors: { margin: DEFAULT_MARGIN },
    })
    const feeds = new RoomFeeds([alsa.infile])
    feeds.start()
    const w = await realWakeWorld(server, wake, {
      source: mic,
      confirm: { phrases: DEFAULT_CONFIRM_PHRASES, withinMs: 3000, local, localAfterMs: 200 },
    })
    const sent = () => server.connections.reduce((n, c) => n + c.heardAudio().byteLength, 0)
    try {
      await until(() => feeds.heard(0, 1000), 'feeds.heard(0, 1000)', 60_000)

      feeds.play(wavPcm(join(FIXTURES, 'near-miss-hey_jarvish-kal16.wav')), [{ i: 0 }])
      await until(() => w.summaries.length === 1, 'w.summaries.length === 1', 60_000)
      // The head fired, the check refused it, nothing was sent, and the wake counts as false.
      expect(w.detections.map((d) => d.score >= 0.5)).toEqual([true])
      expect(w.log.withEvent('wake_refused_locally')).toHaveLength(1)
      expect(w.summaries.map((s) => s.reason)).toEqual(['unconfirmed'])
      expect(w.falseWakes()).toBe(1)
      expect(sent()).toBe(0)
      expect(w.speaker.writtenBytes).toBe(w.earcon.byteLength)
      expect(w.store.listConversations()).toEqual([])

      // Past the refractory time: flite rms's "hey jarvish", which the phrase alone (1e-12) let
      // through: "hey jarvish" beats the phrase over the same stretch, and nothing is sent either.
      await new Promise((r) => setTimeout(r, 2500))
      feeds.play(wavPcm(join(FIXTURES, 'near-miss-hey_jarvish-rms.wav')), [{ i: 0 }])
      await until(() => w.summaries.length === 2, 'w.summaries.length === 2', 60_000)
      expect(w.detections.map((d) => d.score >= 0.5)).toEqual([true, true])
      expect(w.log.withEvent('wake_refused_locally')).toHaveLength(2)
      expect(w.summaries.map((s) => s.reason)).toEqual(['unconfirmed', 'unconfirmed'])
      expect(sent()).toBe(0)

      // Past the refractory time; then the wake phrase and a command in one breath.
      await new Promise((r) => setTimeout(r, 2500))
      const command = parseWav(readFileSync(join(ROOT, 'fixtures/vad/speech-en-gb-f.wav')), 16_000)
      feeds.play(
        Buffer.concat([
          wavPcm(join(FIXTURES, 'hey_jarvis-kal16.wav')),
          command.pcm.subarray(32_000, 64_000),
        ]),
        [{ i: 0 }],
      )
      await until(() => w.states.includes('speaking'), "w.states.includes('speaking')", 60_000)
      expect(w.log.withEvent('wake_checked').map((r) => r.fields.heard)).toEqual([['hey jarvis']])
      // The pre-roll (the phrase) went first, and the command after it.
      expect(sent()).toBeGreaterThan(64_000)
      expect(w.log.withEvent('wake_refused_locally')).toHaveLength(2)
    } finally {
      feeds.stop()
      await w.close()
      await server.close()
      await local.close()
    }
  }, 120_000)
})

/**
 * listen.localCheck.enabled `auto` (the default), on the session loop as the composition wires it
 * (the check's verdicts told to its trust; the trust told of each onset and each session's end),
 * with the real `arecord` on a FIFO, the real detector, the real pocketsphinx check (its default:
 * the phrase alone at 1e-12) and the fake Live service, which transcribes "hey jarvis" only when
 * told to. The trust is kept in a real store, seeded as four confirmed wakes in a row would leave
 * it (test/device/wake-check-trust.test.ts counts them from 0). In shadow the near-miss's audio
 * reaches the service; a confirmed wake the check cannot hear (espeak-ng's "hey jarvis") starts
 * the count over; the fifth agreed confirmed wake earns it, and the near-miss then sends nothing —
 * also after a restart; a phone's "it missed me" after that refusal puts it back in shadow, and
 * the near-miss reaches the service again.
 */
describe.skipIf(skip)('the local wake check earns its place with the household', () => {
  it('shadow sends the near-miss; earned, it holds it; a missed note after a refusal demotes it', async () => {
    const { alsa, mic, wake } = arecordOnFifo()
    const silent: Script = { steps: [] }
    // The model hears the wake phrase only where the test says the household said it.
    let next: Script = silent
    const server = await FakeLiveServer.start({ logger: silentLogger, scripts: () => next })
    const check = KeyphraseCheck.create({
      phrases: ['hey jarvis'],
      threshold: DEFAULT_THRESHOLD.alone,
    })
    const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), 'nocturn-earn-')), 'nocturn.db'))
    const seed = (streak: number) =>
      store.setSetting(
        'wake_check_trust',
        JSON.stringify({ key: 'k', earned: false, streak, kept: 0 }),
        1,
      )
    const log = new MemoryLogger()
    const device = new DeviceState()
    /** A start of the speaker: the trust read back from the store. */
    const restart = () =>
      new WakeCheckTrust({ store, key: 'k', clock: realClock(), logger: log, device })
    seed(4)
    let trust = restart()
    const verdicts: boolean[] = []
    const told: PhraseCheck = {
      check: async (pcm) => {
        const v = await check.check(pcm)
        verdicts.push(v.agreed)
        trust.verdict(v.agreed)
        return v
      },
      close: () => check.close(),
    }
    const feeds = new RoomFeeds([alsa.infile])
    feeds.start()
    const w = await realWakeWorld(server, wake, {
      source: mic,
      idleMs: 1000,
      confirm: {
        phrases: DEFAULT_CONFIRM_PHRASES,
        withinMs: 3000,
        local: told,
        localGates: () => trust.gates,
      },
      onHeard: (onset, running) => trust.heard(onset, running),
      onSessionEnd: (s) => trust.ended(!s.unconfirmed),
    })
    const sent = () => server.connections.reduce((n, c) => n + c.heardAudio().byteLength, 0)
    const command = parseWav(readFileSync(join(ROOT, 'fixtures/vad/speech-en-gb-f.wav')), 16_000)
    const near = wavPcm(join(FIXTURES, 'near-miss-hey_jarvish-kal16.wav'))
    /** Plays a clip and waits for its session to close (and the refractory time to pass). */
    const wakeWith = async (what: string, pcm: Uint8Array, script: Script) => {
      next = script
      const before = w.summaries.length
      const heard = w.detections.length
      feeds.play(pcm, [{ i: 0 }])
      await until(
        () => w.summaries.length === before + 1,
        `${what}: its session closed (the head fired ${w.detections.length - heard} times)`,
        60_000,
      )
      await until(() => feeds.idle, 'the clip played', 10_000)
      await new Promise((r) => setTimeout(r, 2100))
      return w.summaries.at(-1)
    }
    try {
      await until(() => feeds.heard(0, 1000), 'feeds.heard(0, 1000)', 60_000)

      // In shadow: the check refuses the near-miss, but holds nothing: its audio reaches the model.
      const shadowed = await wakeWith('the near-miss in shadow', near, silent)
      expect(shadowed?.unconfirmed).toBe(true)
      expect(verdicts).toEqual([false])
      expect(sent()).toBeGreaterThan(16_000)
      expect(w.log.withEvent('wake_checked_in_shadow').map((r) => r.fields.agreed)).toEqual([false])
      expect(device.snapshot.wakeCheck).toEqual({ state: 'shadow', streak: 4, of: 5, kept: 1 })

      // espeak-ng's "hey jarvis", confirmed by the model: the check cannot hear it. Back to 0.
      const espeak = await wakeWith(
        'espeak-ng',
        // A pause before the command: said in one breath, espeak-ng's phrase scores lower.
        Buffer.concat([
          wavPcm(join(FIXTURES, 'hey_jarvis.wav')),
          new Uint8Array(16_000),
          command.pcm.subarray(32_000, 64_000),
        ]),
        answering(),
      )
      expect(espeak?.unconfirmed).toBe(false)
      expect(verdicts).toEqual([false, false])
      expect(device.snapshot.wakeCheck).toMatchObject({ state: 'shadow', streak: 0 })

      // Four agreed confirmed wakes later (seeded, and the speaker started again) …
      seed(4)
      trust = restart()
      // … flite kal16's "hey jarvis", confirmed and agreed: the fifth in a row. It earns it.
      const fifth = await wakeWith(
        'the fifth',
        Buffer.concat([
          wavPcm(join(FIXTURES, 'hey_jarvis-kal16.wav')),
          command.pcm.subarray(32_000, 64_000),
        ]),
        answering(),
      )
      expect(fifth?.unconfirmed).toBe(false)
      expect(verdicts).toEqual([false, false, true])
      expect(trust.gates).toBe(true)
      expect(log.withEvent('wake_check_earned')).toHaveLength(1)

      // A restart keeps it earned; the near-miss now sends not one frame.
      trust = restart()
      expect(trust.gates).toBe(true)
      const sentBefore = sent()
      const held = await wakeWith('the near-miss, earned', near, silent)
      expect(held?.unconfirmed).toBe(true)
      expect(verdicts).toEqual([false, false, true, false])
      expect(w.log.withEvent('wake_refused_locally')).toHaveLength(1)
      expect(sent()).toBe(sentBefore)

      // "It missed me just now", from a phone, seconds after that refusal: back in shadow.
      trust.retried('a phone said "it missed me"')
      expect(log.withEvent('wake_check_demoted')).toHaveLength(1)
      expect(device.snapshot.wakeCheck).toMatchObject({ state: 'shadow', streak: 0 })
      await wakeWith('the near-miss, demoted', near, silent)
      expect(verdicts).toEqual([false, false, true, false, false])
      expect(sent()).toBeGreaterThan(sentBefore + 16_000)
    } finally {
      feeds.stop()
      await w.close()
      await server.close()
      await check.close()
      store.close()
    }
  }, 180_000)
})
