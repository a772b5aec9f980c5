import { describe, expect, it } from 'vitest'
import { ArecordMic } from '../../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { bytesForMs } from '../../src/audio/pcm.js'
import { PreRollRing } from '../../src/audio/pre-roll.js'
import { SpeechDetector } from '../../src/audio/speech-detector.js'
import { silentLogger } from '../../src/core/logger.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { indexOf, vadClip, vadManifest } from '../helpers/fixtures.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

const FRAME = 640 // 20 ms at 16 kHz

/** Feeds a clip in 20 ms frames; returns where (ms) the detector opened, or undefined. */
async function run(pcm: Uint8Array) {
  const d = await SpeechDetector.create()
  try {
    for (let at = 0; at + FRAME <= pcm.byteLength; at += FRAME) {
      const endMs = ((at + FRAME) / 2 / 16_000) * 1000
      const onset = d.push(pcm.subarray(at, at + FRAME), endMs)
      if (onset) return { openedAtMs: endMs, onset, frameEnd: at + FRAME }
    }
    return undefined
  } finally {
    d.close()
  }
}

const manifest = vadManifest()

describe('local speech detection (WebRTC VAD) on the committed fixtures', () => {
  it.each(manifest.speech)(
    'opens on $file within 300 ms of speech onset',
    async ({ file, onsetMs }) => {
      const r = await run(vadClip(file))
      expect(r).toBeDefined()
      expect(r!.openedAtMs).toBeGreaterThan(onsetMs)
      expect(r!.openedAtMs - onsetMs).toBeLessThanOrEqual(300)
    },
  )

  it.each(manifest.nonSpeech)('never opens on %s', async (file) => {
    expect(await run(vadClip(file))).toBeUndefined()
  })

  it('the pre-roll carries ≈500 ms of audio from before the trigger, ending at the trigger', async () => {
    const { file, onsetMs } = manifest.speech[0]!
    const pcm = vadClip(file)
    const r = await run(pcm)
    const pre = r!.onset.preRoll
    expect(pre.byteLength).toBe(bytesForMs(16_000, 500))
    // It is exactly the 500 ms of the clip that ends with the triggering frame…
    expect(indexOf(pcm, pre)).toBe(r!.frameEnd - pre.byteLength)
    // …so it starts before speech did: the first syllable is in it.
    const preStartMs = ((r!.frameEnd - pre.byteLength) / 32_000) * 1000
    expect(preStartMs).toBeLessThan(onsetMs)
  })

  it('stays shut after an onset until re-armed, then opens again', async () => {
    const pcm = vadClip(manifest.speech[1]!.file)
    const d = await SpeechDetector.create()
    let opens = 0
    for (let round = 0; round < 2; round++) {
      for (let at = 0; at + FRAME <= pcm.byteLength; at += FRAME) {
        if (d.push(pcm.subarray(at, at + FRAME), (round * pcm.byteLength + at) / 32)) opens++
      }
      expect(opens).toBe(round + 1)
      d.rearm()
    }
    d.close()
  })

  it('accepts 40 ms frames too', async () => {
    const pcm = vadClip(manifest.speech[2]!.file)
    const d = await SpeechDetector.create()
    let opened: number | undefined
    for (let at = 0; at + 2 * FRAME <= pcm.byteLength && opened === undefined; at += 2 * FRAME) {
      if (d.push(pcm.subarray(at, at + 2 * FRAME), at / 32))
        opened = ((at + 2 * FRAME) / 32_000) * 1000
    }
    d.close()
    expect(opened).toBeGreaterThan(1000)
    expect(opened).toBeLessThanOrEqual(1300)
  })
})

describe('after a gap in the frames (a mute)', () => {
  it('forgets the voices counted before it: the frame that would have opened a session does not', async () => {
    const { file } = manifest.speech[0]!
    const pcm = vadClip(file)
    const first = await run(pcm)
    expect(first).toBeDefined()
    const d = await SpeechDetector.create()
    try {
      // Every frame up to the one that opened, then that one again a muted second later.
      const last = first!.frameEnd - FRAME
      for (let at = 0; at < last; at += FRAME) {
        expect(d.push(pcm.subarray(at, at + FRAME), ((at + FRAME) / 32_000) * 1000)).toBeUndefined()
      }
      const afterMute = ((last + FRAME) / 32_000) * 1000 + 1000
      expect(d.push(pcm.subarray(last, last + FRAME), afterMute)).toBeUndefined()
    } finally {
      d.close()
    }
  })
})

describe('PreRollRing', () => {
  it('keeps the newest bytes in order across wrap-around', () => {
    const r = new PreRollRing(10)
    r.push(Uint8Array.from([1, 2, 3, 4, 5, 6]), 0)
    r.push(Uint8Array.from([7, 8, 9, 10, 11, 12]), 20)
    expect(Array.from(r.snapshot())).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    r.push(Uint8Array.from(Array.from({ length: 14 }, (_, i) => i)), 40)
    expect(Array.from(r.snapshot())).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13])
    r.clear()
    expect(r.snapshot().byteLength).toBe(0)
  })

  it('starts afresh after a gap in capture time (a mute): nothing from before it is kept', () => {
    const r = new PreRollRing(10)
    expect(r.push(Uint8Array.from([1, 2, 3, 4]), 1000)).toBe(false)
    expect(r.push(Uint8Array.from([5, 6]), 1250)).toBe(false)
    expect(Array.from(r.snapshot())).toEqual([1, 2, 3, 4, 5, 6])
    expect(Array.from(r.snapshot(4))).toEqual([3, 4, 5, 6])
    // Muted for a minute: the next frame is the first of a new stretch.
    expect(r.push(Uint8Array.from([7, 8]), 61_250)).toBe(true)
    expect(Array.from(r.snapshot())).toEqual([7, 8])
  })
})

describe.skipIf(missingCommands('arecord'))('speech detection on a real arecord capture', () => {
  it('opens within 300 ms of onset on audio that came through ALSA, with the pre-roll before it', async () => {
    const { file, onsetMs } = manifest.speech[3]!
    const pcm = vadClip(file)
    const alsa = hermeticAlsa(pcm)
    const mic = new ArecordMic({
      device: alsa.capture,
      clock: realClock(),
      logger: silentLogger,
      env: alsa.env,
    })
    const d = await SpeechDetector.create()
    let received = 0
    let opened: { atMs: number; preRoll: Uint8Array; end: number } | undefined
    await mic.start({
      frame: (frame) => {
        received += frame.byteLength
        // Time within the clip, from the bytes captured so far: the file PCM is not paced.
        const onset = opened ? undefined : d.push(frame, (received / 32_000) * 1000)
        if (onset) opened = { atMs: onset.triggeredAtMs, preRoll: onset.preRoll, end: received }
      },
      error: () => {},
    })
    await until(
      () => opened !== undefined || received >= pcm.byteLength,
      'opened !== undefined || received >= pcm.byteLength',
      60_000,
    )
    await mic.stop()
    d.close()
    expect(opened).toBeDefined()
    expect(opened!.atMs - onsetMs).toBeGreaterThan(0)
    expect(opened!.atMs - onsetMs).toBeLessThanOrEqual(300)
    expect(indexOf(pcm, opened!.preRoll)).toBe(opened!.end - opened!.preRoll.byteLength)
  })
})
