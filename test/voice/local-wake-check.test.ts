import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  DEBIAN_MODEL_DIR,
  DEFAULT_MARGIN,
  DEFAULT_THRESHOLD,
  KeyphraseCheck,
} from '../../src/adapters/pocketsphinx/keyphrase-check.js'
import { parseWav } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
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
