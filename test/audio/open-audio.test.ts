import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openAudio } from '../../src/app/audio.js'
import { parseWav, wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { vadClip } from '../helpers/fixtures.js'

describe('openAudio (composition) with the WAV backend', () => {
  it('the microphone is gated while its own speaker plays, then the room comes through', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-open-audio-'))
    const clip = vadClip('speech-en-us-m.wav')
    writeFileSync(join(dir, 'in.wav'), Buffer.concat([wavHeader(16_000, clip.byteLength), clip]))
    const clock = new VirtualClock()
    const errors: Error[] = []
    const audio = await openAudio(
      {
        backend: 'wav',
        capture: join(dir, 'in.wav'),
        playback: join(dir, 'out.wav'),
        echo: 'gate',
        wavPaced: true,
      },
      { clock, logger: silentLogger, onError: (e) => errors.push(e) },
    )
    const frames: Uint8Array[] = []
    audio.speaker.write(new Uint8Array(24_000)) // 500 ms of speaker audio
    await audio.mic.start({ frame: (p) => frames.push(p.slice()), error: (e) => errors.push(e) })
    await clock.advance(2000)
    await audio.mic.stop()
    await audio.speaker.close()
    const silent = (f: Uint8Array) => f.every((b) => b === 0)
    // ~500 ms playing + 300 ms tail: the first ~39 frames are silence; later ones are the file.
    expect(frames.slice(0, 38).every(silent)).toBe(true)
    expect(frames.slice(41).some(silent)).toBe(false)
    expect(Buffer.compare(frames[60] as Uint8Array, clip.subarray(60 * 640, 61 * 640))).toBe(0)
    expect(parseWav(readFileSync(join(dir, 'out.wav')), 24_000).pcm.byteLength).toBe(24_000)
    expect(errors).toEqual([])
  })
})
