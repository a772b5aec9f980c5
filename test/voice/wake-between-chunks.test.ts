import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { DEFAULT_CONFIRM_PHRASES } from '../../src/voice/wake-confirmation.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { FIXTURES, wavPcm } from '../helpers/wake.js'
import { answering, arecordOnFifo, realWakeWorld } from './wake-world.js'

const skip = missingCommands('arecord')

/**
 * Issue 46 item 2: the wake is caught wherever the chunks fall. The real `arecord` on a FIFO fed
 * at the pace of real time, the REAL openWakeWord detector as the service makes it (the pretrained
 * hey_jarvis head at the default threshold 0.5 without its companion, native runtime, coarse
 * scoring and the second phase), the real SDK against the fake Live service. espeak-ng's en-us+m3 voice at 170 words a
 * minute says "hey jarvis", starting 40 ms into one of the detector's 80 ms chunks: the chunks
 * themselves never hold 0.5 for two in a row (best 0.07), windows 40 ms off them hold 0.69. It
 * opens a session and the model answers; without the second phase nothing fires
 * (test/adapters/openwakeword/offset-phase.test.ts scores the same audio both ways).
 */
describe.skipIf(skip)('a phrase whose peak falls between chunks', () => {
  it('wakes the speaker, though the chunks alone stay below the threshold', async () => {
    const { alsa, mic, wake } = arecordOnFifo()
    const server = await FakeLiveServer.start({ logger: silentLogger, scripts: () => answering() })
    const aligned: number[] = []
    const feeds = new RoomFeeds([alsa.infile])
    feeds.start()
    // The pretrained head alone: the companion head (docs/wake-word.md) lifts these chunks above
    // the threshold on its own, and this is the second phase's test.
    const alone = { ...wake, models: [{ model: 'hey_jarvis', companion: false as const }] }
    const w = await realWakeWorld(server, alone, {
      source: mic,
      confirm: { phrases: DEFAULT_CONFIRM_PHRASES, withinMs: 3000 },
      onScores: (s) => aligned.push(s[0] ?? 0),
    })
    const sent = () => server.connections.reduce((n, c) => n + c.heardAudio().byteLength, 0)
    try {
      await until(() => feeds.heard(0, 1000), 'feeds.heard(0, 1000)', 60_000)
      // The clip (1 s of silence, the phrase, 1 s of silence) 40 ms into a chunk.
      feeds.play(wavPcm(join(FIXTURES, 'hey_jarvis-m3-170.wav')), [{ i: 0, delayMs: 40 }])
      // The clip takes 3 s; the wake comes within it, or never.
      await until(() => w.detections.length > 0, 'the wake', 20_000)
      await until(() => w.states.includes('speaking'), 'the answer', 30_000)
      expect(w.detections).toHaveLength(1)
      expect(w.detections[0]?.score).toBeGreaterThanOrEqual(0.5)
      // The aligned chunks' scores: never two in a row at the threshold.
      const best = Math.max(0, ...aligned.slice(1).map((v, i) => Math.min(v, aligned[i] ?? 0)))
      process.stdout.write(
        `aligned chunks' best run of two ${best.toFixed(3)}; the wake ${w.detections[0]?.score.toFixed(3)}\n`,
      )
      expect(best).toBeLessThan(0.5)
      // The session opened: the phrase's audio went to the model, which answered.
      expect(sent()).toBeGreaterThan(0)
      expect(w.falseWakes()).toBe(0)
    } finally {
      feeds.stop()
      await w.close()
      await server.close()
    }
  }, 120_000)
})
