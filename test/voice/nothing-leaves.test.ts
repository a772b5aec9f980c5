import { describe, expect, it } from 'vitest'
import { ArecordMic } from '../../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { SpeechDetector } from '../../src/audio/speech-detector.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer, type Script } from '../../src/testing/fake-live-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands } from '../helpers/system.js'
import { householdSpeech } from '../helpers/tts.js'
import { until } from '../helpers/wait.js'
import { arecordOnFifo, realWakeWorld, wakeWorld } from './wake-world.js'

const skip = missingCommands('arecord', 'espeak-ng', 'sox')
const MINUTES = 10

/**
 * Issue 22 item 6: ten minutes of a household talking, without the wake phrase, through the real
 * `arecord` on a file-backed PCM into the wake-mode listening chain. The fake Live service sees no
 * connection and no frame, no conversation is stored, the LED never leaves idle, the speaker
 * plays nothing. A file PCM is not paced (alsa-lib reads it as fast as it is asked: ten minutes
 * arrive in well under a minute), so this costs seconds of CI, not ten minutes.
 */
describe.skipIf(skip)('nothing leaves the room before the wake', () => {
  it(`${MINUTES} minutes of speech without the wake phrase open nothing`, async () => {
    const speech = householdSpeech(MINUTES)
    // The same audio opens sessions in speech mode: it is speech, and this test could fail.
    const detector = await SpeechDetector.create()
    let onsets = 0
    for (let o = 0; o + 640 <= 32_000 * 60; o += 640) {
      if (detector.push(speech.subarray(o, o + 640), o / 32)) {
        onsets++
        detector.rearm()
      }
    }
    detector.close()
    expect(onsets).toBeGreaterThan(5)

    const alsa = hermeticAlsa(speech)
    const server = await FakeLiveServer.start({ logger: silentLogger })
    const mic = new ArecordMic({
      device: alsa.capture,
      clock: realClock(),
      logger: new MemoryLogger(),
      env: alsa.env,
    })
    const w = await wakeWorld(server, { source: mic })
    try {
      // Past its end the file PCM repeats its last block: count only the file's own length.
      await until(() => w.roomBytes() >= speech.length, 'all the speech heard', 120_000)
      await new Promise((r) => setTimeout(r, 500)) // a detection still being scored
      expect(w.roomBytes()).toBeGreaterThanOrEqual(speech.length)
      expect(w.detector.frames).toBeGreaterThanOrEqual(speech.length / 640)
      expect(server.connections).toHaveLength(0)
      expect(server.received).toHaveLength(0)
      expect(w.store.listConversations()).toEqual([])
      expect(w.states).toEqual([])
      expect(w.speaker.writtenBytes).toBe(0)
    } finally {
      await w.close()
      await server.close()
    }
  }, 180_000)
})

/** Each false wake's session: the model transcribes what it heard, a sentence with no wake phrase. */
const unconfirmed = (): Script => ({
  steps: [
    { transcribe: 'The kettle has boiled, and the dishwasher needs emptying.', afterAudioMs: 300 },
    { speak: 'time', chunkMs: 40 },
    { send: { serverContent: { turnComplete: true } } },
  ],
})

/**
 * The same ten minutes on the REAL openWakeWord detector (the pretrained hey_jarvis head, default
 * threshold and settings, native runtime), through the real `arecord`. The recording goes out
 * eight times faster than life, and waits whenever the detector has more than a second unscored:
 * it must score every chunk (none dropped), or the test says so. TTS prose full of near-misses
 * makes this detector fire now and then (docs/wake-word.md, "Measured"): what must keep the room's
 * words from being answered is then the second opinion. So, whatever the detector did: every
 * session that opened was a false wake, closed without a word (the speaker played only earcons,
 * never the model's reply), nothing was stored, every false wake was counted and the LED ended
 * idle, never speaking. How many times it fired is printed.
 */
describe.skipIf(skip)('nothing leaves the room before the wake, on the real detector', () => {
  it(`${MINUTES} minutes of speech without the wake phrase: no word answered`, async () => {
    const speech = householdSpeech(MINUTES)
    const { alsa, mic, wake } = arecordOnFifo()
    const server = await FakeLiveServer.start({ logger: silentLogger, scripts: unconfirmed })
    // Fed from before the recorder starts: it waits for its first audio. The feed holds while more
    // than a second of what it wrote is not scored yet (in the pipes, or waiting in the detector).
    const feeds = new RoomFeeds([alsa.infile])
    let unscored = () => 0
    feeds.start({ speed: 8, hold: () => unscored() > 12 })
    let atReset = 0
    // Scored, passed over or dropped. A chunk with no voice in its agree window is passed over by
    // design (no wake can stand there): a pause in the prose, or a gap the feed's holds leave in
    // the frames' capture times (~50 of the 7700 here). Left out, each stayed "unscored" until the
    // next reset (a false wake's), and where 12 gathered before the first one the feed held for
    // ever ("nothing heard for 60 s", 12.3 chunks unscored, 0 detections, in one CI run).
    const done = () => {
      const s = w.detector.stats()
      return s.chunksScored + s.chunksQuiet + s.chunksDropped
    }
    const w = await realWakeWorld(server, wake, {
      source: mic,
      onDetectorReset: () => {
        atReset = done()
      },
    })
    // In chunks: what is in the pipes (written, not yet read by arecord), and what the detector
    // has not scored yet.
    const inPipes = () => (feeds.given(0) - w.roomBytes()) / 2560
    unscored = () => inPipes() + w.detectorBytesSinceReset() / 2560 - (done() - atReset)
    try {
      // Each wait bounded and named, with where things stood: a stuck step says which it was.
      // Which side stood still: the pipes or the detector.
      const stood = () => {
        const s = w.detector.stats()
        return (
          `${unscored().toFixed(1)} chunks unscored (${inPipes().toFixed(1)} in the pipes), ` +
          `${w.detections.length} detections, ${w.summaries.length} summaries of ` +
          `${server.connections.length} sessions; the detector: ${s.chunksScored} scored, ` +
          `${s.chunksQuiet} quiet, ${s.chunksDropped} dropped, ${s.rests} rests, lag ${s.lastLagMs} ms`
        )
      }
      const step = (cond: () => boolean, what: string, ms: number) =>
        until(cond, what, ms).catch((err: Error) => {
          throw new Error(`${err.message} (${stood()})`)
        })
      await step(() => feeds.heard(0, 100), 'the recorder hearing its first audio', 30_000)
      const before = w.roomBytes()
      feeds.play(speech, [{ i: 0 }])
      // Bounded by progress, not by the clock: on a loaded machine the detector scores slower and
      // the feed waits for it, which is the point; a minute with nothing heard is a hang.
      let last = { bytes: -1, at: Date.now() }
      const stalled = () => {
        const bytes = w.roomBytes()
        if (bytes !== last.bytes) last = { bytes, at: Date.now() }
        return Date.now() - last.at > 60_000
      }
      await step(
        () => w.roomBytes() - before >= speech.length || stalled(),
        'all the speech heard',
        900_000,
      )
      if (stalled()) throw new Error(`nothing heard for 60 s (${stood()})`)
      await step(() => unscored() < 1, 'every chunk scored', 30_000)
      // A false wake's session waits up to 1.5 s for the second opinion, then closes.
      await step(() => w.summaries.length === server.connections.length, 'every summary', 30_000)
      await new Promise((r) => setTimeout(r, 2000))
      const stats = w.detector.stats()
      console.log(
        `real detector on ${MINUTES} min of household prose: ${w.detections.length} detection(s) ` +
          `(scores ${w.detections.map((d) => d.score.toFixed(2)).join(', ') || 'none'}), ` +
          `${server.connections.length} session(s) opened, ${w.falseWakes()} false wake(s); ` +
          `${stats.chunksScored} chunks scored, ${stats.chunksQuiet} passed over (no voice near), ` +
          `${stats.chunksDropped} dropped`,
      )
      expect(stats.chunksDropped).toBe(0)
      expect(stats.chunksScored + stats.chunksQuiet).toBeGreaterThanOrEqual(
        Math.floor((speech.length / 2560) * 0.99),
      )
      expect(w.summaries.map((s) => s.reason)).toEqual(server.connections.map(() => 'unconfirmed'))
      expect(w.falseWakes()).toBe(server.connections.length)
      expect(w.speaker.writtenBytes).toBe(server.connections.length * w.earcon.byteLength)
      expect(w.store.listConversations()).toEqual([])
      expect(w.states).not.toContain('speaking')
      expect(w.states.at(-1) ?? 'idle').toBe('idle')
      expect(server.errors).toEqual([])
    } finally {
      feeds.stop()
      await w.close()
      await server.close()
    }
  }, 1_000_000)
})
