import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { loadNaudiodon } from '../../src/adapters/portaudio/naudiodon.js'
import {
  PORTAUDIO_AHEAD_MS,
  PORTAUDIO_FRAMES_PER_BUFFER_MS,
} from '../../src/adapters/portaudio/portaudio-device.js'
import { listPortAudioDevices } from '../../src/adapters/portaudio/portaudio-devices.js'
import { PortAudioMic } from '../../src/adapters/portaudio/portaudio-mic.js'
import { createPortAudioSpeaker } from '../../src/adapters/portaudio/portaudio-speaker.js'
import { bytesForMs } from '../../src/audio/pcm.js'
import type { NocturnError } from '../../src/core/errors.js'
import { silentLogger } from '../../src/core/logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { type HermeticAlsa, hermeticAlsa } from '../helpers/alsa.js'
import { indexOf, vadClip } from '../helpers/fixtures.js'
import { REQUIRE_SYSTEM } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

/**
 * naudiodon is optional: where it did not build these tests skip with the reason — except in CI
 * (NOCTURN_REQUIRE_SYSTEM=1), which runs on x86-64 where it must build, so there they fail.
 */
function naudiodonMissing(): string | undefined {
  try {
    loadNaudiodon()
    return undefined
  } catch (e) {
    if (REQUIRE_SYSTEM) throw e
    process.stdout.write(`skipped: ${(e as Error).message}\n`)
    return (e as Error).message
  }
}

const clip = vadClip('speech-en-us-m.wav')
const reply = Buffer.concat([vadClip('speech-en-gb-f.wav'), vadClip('speech-en-sc-m.wav')])
let alsa: HermeticAlsa
let previous: string | undefined

// PortAudio reads ALSA's configuration when it initialises: point it at ours before first use.
// Vitest runs each test file in its own process, so this does not leak into other files.
beforeAll(() => {
  alsa = hermeticAlsa(clip, { stall: false })
  previous = process.env.ALSA_CONFIG_PATH
  process.env.ALSA_CONFIG_PATH = alsa.env.ALSA_CONFIG_PATH
})
afterAll(() => {
  if (previous === undefined) delete process.env.ALSA_CONFIG_PATH
  else process.env.ALSA_CONFIG_PATH = previous
})

const skip = naudiodonMissing()
/** Lets virtual time pass in small steps, giving PortAudio's threads real time to write, until `check()`. */
async function playUntil(clock: VirtualClock, check: () => boolean): Promise<void> {
  while (!check()) {
    await clock.advance(20)
    await new Promise((r) => setTimeout(r, 2))
  }
}

describe.skipIf(skip)('PortAudio through the real naudiodon on file-backed ALSA PCMs', () => {
  it('lists the hermetic PCMs by name', () => {
    const names = listPortAudioDevices(loadNaudiodon(), 'capture').map((d) => d.name)
    expect(names).toEqual(expect.arrayContaining(['nocturn_cap', 'nocturn_play']))
  })

  it("capture returns the fixture's samples in 20 ms frames", async () => {
    const mic = new PortAudioMic({
      device: 'nocturn_cap',
      clock: realClock(),
      logger: silentLogger,
    })
    const frames: Uint8Array[] = []
    const errors: Error[] = []
    await mic.start({ frame: (p) => frames.push(p.slice()), error: (e) => errors.push(e) })
    await until(
      () => frames.length * 640 >= clip.byteLength,
      'frames.length * 640 >= clip.byteLength',
      60_000,
    )
    await mic.stop()
    expect(errors).toEqual([])
    expect(new Set(frames.map((f) => f.byteLength))).toEqual(new Set([640]))
    const got = Buffer.concat(frames)
    expect(Buffer.compare(got.subarray(0, clip.byteLength), clip)).toBe(0)
  })

  it('playback writes the payload; drop destroys the stream and the next reply plays whole', async () => {
    const clock = new VirtualClock()
    const errors: NocturnError[] = []
    const s = createPortAudioSpeaker({
      device: 'nocturn_play',
      clock,
      logger: silentLogger,
      onError: (e) => errors.push(e),
      // Virtual time outruns naudiodon's real write callbacks: not a hung stream.
      stallMs: Number.POSITIVE_INFINITY,
    })
    s.speaker.write(reply)
    await clock.advance(1000)
    const report = s.speaker.drop()
    expect(report.playedMs).toBe(1000)
    expect(report.discardedMs).toBeCloseTo((reply.byteLength / 48_000) * 1000 - 1000, 6)
    await clock.advance(2000)
    const second = vadClip('speech-de-m.wav')
    s.speaker.write(second)
    // The silence the device feeds after a reply pushes its tail through the file PCM.
    await playUntil(clock, () => alsa.played().some((f) => indexOf(f, second) >= 0))
    await s.speaker.close()
    const all = Buffer.concat(alsa.played())
    // PortAudio starts each stream with a little silence, so look for the payload, not at 0.
    // The first reply began playing (how much reached the file before the drop depends on real
    // time, which the virtual clock does not spend; destroy() discards naudiodon's JS queue)…
    expect(indexOf(all, reply.subarray(0, 960))).toBeGreaterThanOrEqual(0)
    // …and nothing past what the device had passed to naudiodon ever played: the rest of the
    // paced speaker's lead waited in JS and was thrown away.
    const fed = bytesForMs(24_000, 1000 + PORTAUDIO_AHEAD_MS + PORTAUDIO_FRAMES_PER_BUFFER_MS)
    expect(indexOf(all, reply.subarray(fed, fed + 960))).toBe(-1)
    expect(indexOf(all, reply.subarray(bytesForMs(24_000, 2000), bytesForMs(24_000, 2100)))).toBe(
      -1,
    )
    expect(errors).toEqual([])
  })

  it('once a reply has played out its stream is replaced by a fresh one, left unfed until the next reply, and each reply reaches the device whole, its last partial buffer included', async () => {
    const clock = new VirtualClock()
    const files = alsa.played().length
    const s = createPortAudioSpeaker({
      device: 'nocturn_play',
      clock,
      logger: silentLogger,
      stallMs: Number.POSITIVE_INFINITY,
    })
    const mine = () => alsa.played().slice(files)
    // Neither reply is a whole number of PortAudio buffers.
    const buffer = bytesForMs(24_000, PORTAUDIO_FRAMES_PER_BUFFER_MS)
    const first = Buffer.from(vadClip('speech-en-gb-f.wav').subarray(0, buffer * 3 + 100))
    const second = Buffer.from(vadClip('speech-de-m.wav').subarray(0, buffer * 2 + 700))
    s.speaker.write(first)
    s.speaker.endOfReply()
    // Its tail is out without the next reply: the end of the reply completed its last buffer.
    await playUntil(clock, () => mine().some((f) => indexOf(f, first) >= 0))
    const opened = alsa.played().length
    // Played out: the stream is closed and a fresh one opened (a file of its own).
    await playUntil(clock, () => alsa.played().length > opened)
    const fresh = () => alsa.played().at(-1) as Buffer
    // PortAudio's own start-up silence aside, nothing goes to the fresh stream while idle.
    await new Promise((r) => setTimeout(r, 200))
    const before = fresh().byteLength
    await clock.advance(5_000)
    await new Promise((r) => setTimeout(r, 200))
    expect(fresh().byteLength).toBe(before)
    s.speaker.write(second)
    s.speaker.endOfReply()
    await playUntil(clock, () => indexOf(fresh(), second) >= 0)
    await s.speaker.close()
    expect(
      fresh()
        .subarray(0, indexOf(fresh(), second))
        .every((b) => b === 0),
    ).toBe(true)
    expect(indexOf(fresh(), first.subarray(0, 960))).toBe(-1)
  })

  it('an unknown device name is a clear error naming `nocturn devices`', async () => {
    const mic = new PortAudioMic({
      device: 'no_such_mic',
      clock: realClock(),
      logger: silentLogger,
    })
    await expect(mic.start({ frame() {}, error() {} })).rejects.toThrow(
      'PortAudio capture device "no_such_mic" does not exist here; run "nocturn devices --backend portaudio" to list the ones that do',
    )
    expect(() =>
      createPortAudioSpeaker({
        device: 'no_such_speaker',
        clock: realClock(),
        logger: silentLogger,
      }),
    ).toThrow(/"no_such_speaker" does not exist here; run "nocturn devices/)
  })

  it('segfault-handler is neutralised: a WebAssembly bounds trap still throws after loading naudiodon', () => {
    // A module whose only function loads 4 bytes at 128 KiB from a 64 KiB memory.
    const wasm = [
      0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 7, 1, 3,
      111, 111, 98, 0, 0, 10, 11, 1, 9, 0, 65, 128, 128, 8, 40, 2, 0, 11,
    ]
    const script = `
      require('naudiodon')
      const m = new WebAssembly.Instance(new WebAssembly.Module(Uint8Array.from(${JSON.stringify(wasm)})))
      try { m.exports.oob() } catch (e) { console.log(e.constructor.name + ': ' + e.message); process.exit(0) }
      process.exit(2)`
    const r = spawnSync(process.execPath, ['-e', script], {
      cwd: createRequire(import.meta.url)
        .resolve('naudiodon')
        .replace(/node_modules.*$/, ''),
      encoding: 'utf8',
    })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('RuntimeError: memory access out of bounds')
  })
})
