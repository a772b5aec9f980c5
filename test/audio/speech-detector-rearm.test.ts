import { describe, expect, it } from 'vitest'
import { SpeechDetector } from '../../src/audio/speech-detector.js'
import { vadClip, vadManifest } from '../helpers/fixtures.js'

const FRAME = 640 // 20 ms at 16 kHz
const NOISE_MINUTES = 2

/**
 * Issue 16 item 2: after a conversation the detector must be as strict as before it. A session
 * opens on speech; the session holds the microphone (the detector hears nothing meanwhile); then
 * it is re-armed and hears only room noise for minutes. It must not open on that noise — before
 * the fix it opened on the third frame, every time, because the voice detector kept the state it
 * had adapted to the speech and no warm-up ran again.
 */
function feed(d: SpeechDetector, pcm: Uint8Array, ms: number): number {
  let opens = 0
  const frames = Math.floor(pcm.byteLength / FRAME)
  for (let i = 0; i < Math.floor(ms / 20); i++) {
    const at = (i % frames) * FRAME
    if (d.push(pcm.subarray(at, at + FRAME), i * 20)) {
      opens++
      d.rearm()
    }
  }
  return opens
}

const manifest = vadManifest()
const speech = vadClip(manifest.speech[0]!.file)

describe('re-armed after a session, the speech detector is as strict as a fresh one', () => {
  it.each(manifest.nonSpeech)(
    '%s: no session opens in minutes of it after a conversation',
    async (file) => {
      const noise = vadClip(file)
      const d = await SpeechDetector.create()
      try {
        // Fresh: the noise does not open a session…
        expect(feed(d, noise, 15_000)).toBe(0)
        // …someone speaks: a session opens and takes the microphone…
        let opened = false
        for (let at = 0; at + FRAME <= speech.byteLength && !opened; at += FRAME) {
          opened = d.push(speech.subarray(at, at + FRAME), at / 32) !== undefined
        }
        expect(opened).toBe(true)
        // …it closes, the detector is re-armed, and the room is only noise again.
        d.rearm()
        expect(feed(d, noise, NOISE_MINUTES * 60_000)).toBe(0)
        // And speech still opens the next one.
        d.rearm()
        expect(feed(d, speech, (speech.byteLength / 32_000) * 1000)).toBeGreaterThan(0)
      } finally {
        d.close()
      }
    },
  )
})
