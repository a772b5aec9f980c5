import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { WavMic } from '../../src/adapters/wav/wav-mic.js'
import { createWavSpeaker } from '../../src/adapters/wav/wav-speaker.js'
import { parseWav, wavHeader } from '../../src/audio/wav.js'
import type { NocturnError } from '../../src/core/errors.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { until } from '../helpers/wait.js'

/** A WAV file with arbitrary format fields, built by hand. */
function wav(o: {
  rate: number
  channels: number
  bits: number
  format?: number
  samples: number[]
}) {
  const width = o.bits / 8
  const data = new Uint8Array(o.samples.length * width)
  const v = new DataView(data.buffer)
  o.samples.forEach((s, i) => {
    if (o.format === 3) v.setFloat32(i * 4, s, true)
    else if (o.bits === 8) v.setUint8(i, Math.round(s * 127) + 128)
    else if (o.bits === 16) v.setInt16(i * 2, Math.round(s * 32767), true)
    else if (o.bits === 24) {
      const x = Math.round(s * 8388607)
      v.setUint8(i * 3, x & 0xff)
      v.setUint8(i * 3 + 1, (x >> 8) & 0xff)
      v.setInt8(i * 3 + 2, x >> 16)
    } else v.setInt32(i * 4, Math.round(s * 2147483647), true)
  })
  const h = new Uint8Array(44)
  const hv = new DataView(h.buffer)
  h.set(wavHeader(o.rate, data.byteLength))
  hv.setUint16(20, o.format ?? 1, true)
  hv.setUint16(22, o.channels, true)
  hv.setUint32(28, o.rate * width * o.channels, true)
  hv.setUint16(32, width * o.channels, true)
  hv.setUint16(34, o.bits, true)
  return Buffer.concat([h, data])
}

const int16 = (b: Uint8Array) => Array.from(new Int16Array(Uint8Array.from(b).buffer))
const codeOf = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    return `${(e as NocturnError).code}: ${(e as Error).message}`
  }
  return 'no error'
}

describe('WAV parsing: convert what is safe, refuse the rest clearly', () => {
  it('reads 16-bit mono as is', () => {
    const r = parseWav(wav({ rate: 16000, channels: 1, bits: 16, samples: [0, 0.5, -0.5] }), 16000)
    expect(int16(r.pcm)).toEqual([0, 16384, -16383])
  })

  it('downmixes stereo and converts 8-, 24-, 32-bit and float samples to 16-bit', () => {
    const stereo = parseWav(
      wav({ rate: 16000, channels: 2, bits: 16, samples: [0.5, 0, 0.25, 0.25] }),
    )
    expect(int16(stereo.pcm)).toEqual([8192, 8192])
    expect(stereo.source).toEqual({ channels: 2, bitsPerSample: 16, float: false })
    for (const bits of [8, 24, 32]) {
      const r = parseWav(wav({ rate: 16000, channels: 1, bits, samples: [0.5, -0.5] }))
      const [hi, lo] = int16(r.pcm)
      expect(Math.abs((hi as number) - 16384)).toBeLessThan(300)
      expect(Math.abs((lo as number) + 16384)).toBeLessThan(300)
    }
    const f = parseWav(wav({ rate: 16000, channels: 1, bits: 32, format: 3, samples: [0.5, -1] }))
    expect(int16(f.pcm)).toEqual([16384, -32767])
  })

  it('refuses a wrong sample rate, saying how to convert it', () => {
    expect(
      codeOf(() =>
        parseWav(wav({ rate: 44100, channels: 1, bits: 16, samples: [0] }), 16000, 'in.wav'),
      ),
    ).toBe(
      'NOC_ERR_WAV_FORMAT: in.wav is 44100 Hz but 16000 Hz is needed (convert with: sox in.wav -r 16000 -c 1 -b 16 out.wav)',
    )
  })

  it('refuses unreadable depths, compressed formats and non-WAV files', () => {
    expect(
      codeOf(() => parseWav(wav({ rate: 16000, channels: 1, bits: 12, samples: [] }))),
    ).toMatch(/^NOC_ERR_WAV_FORMAT: WAV file has 1 channel\(s\) of 12-bit samples/)
    expect(
      codeOf(() => parseWav(wav({ rate: 16000, channels: 1, bits: 16, format: 2, samples: [] }))),
    ).toMatch(/^NOC_ERR_WAV_FORMAT: WAV file uses WAVE format 2/)
    expect(codeOf(() => parseWav(Buffer.from('ID3 this is an mp3')))).toBe(
      'NOC_ERR_WAV_FORMAT: WAV file is not a RIFF/WAVE file',
    )
  })

  it('a truncated file is an error saying how much is missing', () => {
    const full = wav({ rate: 16000, channels: 1, bits: 16, samples: new Array(100).fill(0.1) })
    expect(codeOf(() => parseWav(full.subarray(0, 100), 16000, 'cut.wav'))).toBe(
      'NOC_ERR_WAV_TRUNCATED: cut.wav is truncated: its header promises 200 bytes of audio, the file holds 56',
    )
    expect(codeOf(() => parseWav(full.subarray(0, 30)))).toMatch(/^NOC_ERR_WAV_TRUNCATED/)
    expect(codeOf(() => parseWav(full.subarray(0, 40)))).toMatch(/^NOC_ERR_WAV_TRUNCATED/)
  })
})

describe('WAV backends', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-wav-'))
  const samples = Array.from({ length: 1600 }, (_, i) => Math.sin(i / 10) * 0.5)

  it('microphone: frames of the file, paced by the clock, optionally looping', async () => {
    const path = join(dir, 'mic.wav')
    writeFileSync(path, wav({ rate: 16000, channels: 1, bits: 16, samples }))
    const clock = new VirtualClock()
    const frames: Uint8Array[] = []
    const mic = new WavMic({ path, clock, paced: true, loop: true })
    await mic.start({ frame: (p) => frames.push(p.slice()), error: () => {} })
    expect(frames).toHaveLength(1)
    await clock.advance(190)
    expect(frames).toHaveLength(10) // 100 ms of file = 5 frames, twice
    expect(Buffer.compare(frames[5] as Uint8Array, frames[0] as Uint8Array)).toBe(0)
    await mic.stop()
    await clock.advance(1000)
    expect(frames).toHaveLength(10)
  })

  it('microphone: unpaced delivers the whole file and ends; a bad file fails start()', async () => {
    const path = join(dir, 'fast.wav')
    writeFileSync(path, wav({ rate: 16000, channels: 2, bits: 16, samples }))
    let ended = false
    const got: Uint8Array[] = []
    const mic = new WavMic({ path, clock: new VirtualClock(), onEnd: () => (ended = true) })
    await mic.start({ frame: (p) => got.push(p.slice()), error: () => {} })
    await until(() => ended, 'ended', 60_000)
    expect(got).toHaveLength(2) // 800 stereo frames = 50 ms mono = 2 whole 20 ms frames
    const bad = join(dir, 'bad.wav')
    writeFileSync(bad, wav({ rate: 8000, channels: 1, bits: 16, samples }))
    await expect(
      new WavMic({ path: bad, clock: new VirtualClock() }).start({ frame() {}, error() {} }),
    ).rejects.toThrow(/8000 Hz but 16000 Hz is needed/)
  })

  it('speaker: the paced buffer writes a valid WAV of what played, cut where it was dropped', async () => {
    const path = join(dir, 'out.wav')
    const clock = new VirtualClock()
    const { speaker, device } = createWavSpeaker({ path, clock })
    speaker.write(new Uint8Array(48_000).fill(1)) // 1 s at 24 kHz
    await clock.advance(500)
    expect(speaker.drop().playedMs).toBe(500)
    speaker.write(new Uint8Array(4800).fill(2))
    await clock.advance(500)
    await speaker.close()
    const r = parseWav(readFileSync(path), 24_000)
    expect(r.pcm.byteLength).toBe(24_000 + 960 + 4800) // played + the 20 ms lead, then the 2nd reply
    expect(device.cuts).toEqual([24_960])
  })
})
