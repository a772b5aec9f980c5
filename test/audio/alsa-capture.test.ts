import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { listAlsaPcms } from '../../src/adapters/alsa/alsa-devices.js'
import { ArecordMic } from '../../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { CaptureWatchdog } from '../../src/audio/capture-watchdog.js'
import { MicGate } from '../../src/audio/mic-gate.js'
import type { NocturnError } from '../../src/core/errors.js'
import { silentLogger } from '../../src/core/logger.js'
import type { AudioIn, AudioInSink } from '../../src/ports/audio.js'
import { hermeticAlsa, processExists } from '../helpers/alsa.js'
import { vadClip } from '../helpers/fixtures.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

const skip = missingCommands('arecord', 'aplay', 'mkfifo')
const clip = vadClip('speech-en-us-m.wav')
const fast = { initialMs: 20, maxMs: 200, healthyMs: 5000 }

/** Collects what leaves an AudioIn: frames (copied) and errors. */
function collector() {
  const frames: Uint8Array[] = []
  const errors: NocturnError[] = []
  const sink: AudioInSink = {
    frame: (pcm) => frames.push(pcm.slice()),
    error: (e) => errors.push(e as NocturnError),
  }
  const bytes = () => Buffer.concat(frames)
  return { frames, errors, sink, bytes }
}

const stops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const s of stops.splice(0)) await s()
})

function mic(alsa: ReturnType<typeof hermeticAlsa>, device: string, command?: string) {
  const m = new ArecordMic({
    device,
    clock: realClock(),
    logger: silentLogger,
    env: alsa.env,
    backoff: fast,
    command,
  })
  stops.push(() => m.stop())
  return m
}

describe.skipIf(skip)('ALSA capture through a real arecord on a file-backed PCM', () => {
  it("returns the fixture's samples, in 20 ms frames", async () => {
    const alsa = hermeticAlsa(clip)
    const m = mic(alsa, alsa.capture)
    const c = collector()
    await m.start(c.sink)
    await until(
      () => c.bytes().byteLength >= clip.byteLength,
      'c.bytes().byteLength >= clip.byteLength',
      60_000,
    )
    await m.stop()
    expect(c.errors).toEqual([])
    expect(new Set(c.frames.map((f) => f.byteLength))).toEqual(new Set([640]))
    expect(Buffer.compare(c.bytes().subarray(0, clip.byteLength), clip)).toBe(0)
  })

  it('frames are lent, not allocated: at most two buffers under every frame, and slice() copies', async () => {
    // The recorder's stdout is read into one reused buffer (stdout-socket.ts) and a frame split
    // across reads is assembled in one of the splitter's own (ports/audio.ts: valid during the
    // call). A fresh buffer per frame piled up between collections (bench/RESULTS.md).
    const alsa = hermeticAlsa(clip)
    const m = mic(alsa, alsa.capture)
    const under = new Set<ArrayBufferLike>()
    let frames = 0
    let sliceCopies = true
    await m.start({
      frame: (pcm) => {
        frames++
        under.add(pcm.buffer)
        sliceCopies &&= pcm.slice().buffer !== pcm.buffer
      },
      error: () => {},
    })
    await until(() => frames >= 200, 'frames >= 200', 60_000)
    await m.stop()
    expect(under.size).toBeLessThanOrEqual(2)
    expect(sliceCopies).toBe(true)
  })

  it('recovers from a killed arecord: an error naming the signal, a new child, no zombie', async () => {
    const alsa = hermeticAlsa(clip)
    const m = mic(alsa, alsa.capture)
    const c = collector()
    await m.start(c.sink)
    await until(
      () => c.frames.length > 0 && m.pid !== undefined,
      'c.frames.length > 0 && m.pid !== undefined',
      60_000,
    )
    const first = m.pid as number
    process.kill(first, 'SIGKILL')
    await until(() => c.errors.length > 0, 'c.errors.length > 0', 60_000)
    expect(c.errors[0]?.code).toBe('NOC_ERR_AUDIO_DEVICE_FAILED')
    expect(c.errors[0]?.message).toMatch(/arecord .* was killed by SIGKILL/)
    await until(
      () => m.pid !== undefined && m.pid !== first,
      'm.pid !== undefined && m.pid !== first',
      60_000,
    )
    const before = c.frames.length
    await until(() => c.frames.length > before + 10, 'c.frames.length > before + 10', 60_000)
    expect(processExists(first)).toBe(false)
    await m.stop()
    expect(m.pid).toBeUndefined()
  })

  it('an unknown device name is a clear error that names `nocturn devices`, retried with backoff', async () => {
    const alsa = hermeticAlsa(clip)
    const m = mic(alsa, 'plughw:CARD=NoSuchCard,DEV=0')
    const c = collector()
    await m.start(c.sink)
    await until(() => c.errors.length >= 2, 'c.errors.length >= 2', 60_000)
    await m.stop()
    expect(c.errors[0]?.code).toBe('NOC_ERR_AUDIO_DEVICE_UNKNOWN')
    expect(c.errors[0]?.message).toContain('"plughw:CARD=NoSuchCard,DEV=0"')
    expect(c.errors[0]?.message).toContain('nocturn devices')
    expect(c.frames).toEqual([])
  })

  it('a PCM that names a card by number is refused up front, pointing at names', () => {
    for (const device of ['hw:0', 'plughw:1,0', 'plughw:CARD=1,DEV=0']) {
      expect(() => new ArecordMic({ device, clock: realClock(), logger: silentLogger })).toThrow(
        `ALSA capture device "${device}" names a card by number, which changes between boots; use its name (plughw:CARD=<id>,DEV=0 or a PCM from /etc/asound.conf) — run "nocturn devices" to list them`,
      )
    }
    expect(
      () =>
        new ArecordMic({
          device: 'plughw:CARD=seeed2micvoicec,DEV=0',
          clock: realClock(),
          logger: silentLogger,
        }),
    ).not.toThrow()
  })

  it('a device that delivers nothing is noticed by the watchdog, which restarts capture', async () => {
    const alsa = hermeticAlsa(clip)
    const m = mic(alsa, alsa.stall)
    const w = new CaptureWatchdog({
      source: m,
      clock: realClock(),
      stallMs: 200,
      deviceName: alsa.stall,
      logger: silentLogger,
    })
    stops.push(() => w.stop())
    const c = collector()
    await w.start(c.sink)
    await until(() => m.pid !== undefined, 'm.pid !== undefined', 60_000)
    const first = m.pid as number
    await until(() => c.errors.length >= 2, 'c.errors.length >= 2', 60_000)
    expect(c.errors[0]?.code).toBe('NOC_ERR_AUDIO_STALLED')
    expect(c.errors[0]?.message).toContain('"nocturn_stall" delivered no audio')
    await until(
      () => m.pid !== undefined && m.pid !== first,
      'm.pid !== undefined && m.pid !== first',
      60_000,
    )
    await w.stop()
    expect(processExists(first)).toBe(false)
    expect(c.frames).toEqual([])
  })

  it('a child writing garbage to stderr: audio still flows; when it dies the error is printable', async () => {
    const alsa = hermeticAlsa(clip)
    const noisy = join(alsa.dir, 'noisy-arecord')
    writeFileSync(noisy, '#!/bin/sh\nhead -c 400 /dev/urandom >&2\nexec arecord "$@"\n')
    chmodSync(noisy, 0o755)
    const m = mic(alsa, alsa.capture, noisy)
    const c = collector()
    await m.start(c.sink)
    await until(
      () => c.bytes().byteLength >= clip.byteLength,
      'c.bytes().byteLength >= clip.byteLength',
      60_000,
    )
    await m.stop()
    expect(c.errors).toEqual([])
    expect(Buffer.compare(c.bytes().subarray(0, clip.byteLength), clip)).toBe(0)

    const dying = join(alsa.dir, 'dying-arecord')
    writeFileSync(
      dying,
      '#!/bin/sh\nhead -c 400 /dev/urandom >&2\nprintf "\\nfatal: card gone\\n" >&2\nexit 3\n',
    )
    chmodSync(dying, 0o755)
    const d = mic(alsa, alsa.capture, dying)
    const e = collector()
    await d.start(e.sink)
    await until(() => e.errors.length > 0, 'e.errors.length > 0', 60_000)
    await d.stop()
    expect(e.errors[0]?.message).toMatch(/exited with code 3: fatal: card gone$/)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting there are none
    expect(e.errors[0]?.message).not.toMatch(/[\x00-\x1f\x7f-\xff]/)
  })

  it('lists the PCMs of the hermetic config by name', async () => {
    const alsa = hermeticAlsa(clip)
    const names = (await listAlsaPcms('capture', alsa.env)).map((p) => p.name)
    expect(names).toEqual(expect.arrayContaining(['nocturn_cap', 'nocturn_play', 'nocturn_stall']))
  })
})

/** Counts what the device delivered before the gate, so "nothing left" means something. */
function tap(source: AudioIn) {
  const seen = { frames: 0, bytes: [] as Uint8Array[] }
  const tapped: AudioIn = {
    sampleRateHz: source.sampleRateHz,
    start: (sink) =>
      source.start({
        frame: (pcm, at) => {
          seen.frames++
          seen.bytes.push(pcm.slice())
          sink.frame(pcm, at)
        },
        error: (e, recoverable) => sink.error(e, recoverable),
      }),
    stop: () => source.stop(),
  }
  return { tapped, seen }
}

describe.skipIf(skip)(
  'mute and the echo gate on real captured audio (bytes leaving AudioIn)',
  () => {
    function setup(echo: 'gate' | 'aec', speakerQueuedMs: number) {
      const alsa = hermeticAlsa(clip)
      const { tapped, seen } = tap(mic(alsa, alsa.capture))
      const gate = new MicGate({
        source: tapped,
        speaker: { queuedMs: () => speakerQueuedMs },
        clock: realClock(),
        echo,
        tailMs: 300,
      })
      return { gate, seen, c: collector() }
    }

    it('muted: the device delivers audio and not one byte leaves', async () => {
      const s = setup('gate', 0)
      s.gate.setMuted(true)
      await s.gate.start(s.c.sink)
      await until(() => s.seen.frames >= 50, 's.seen.frames >= 50', 60_000)
      await s.gate.stop()
      expect(s.c.frames).toEqual([])
    })

    it('gate while the speaker plays: every frame leaves as silence of the same length', async () => {
      const s = setup('gate', 1000)
      await s.gate.start(s.c.sink)
      await until(() => s.seen.frames >= 50, 's.seen.frames >= 50', 60_000)
      await s.gate.stop()
      expect(s.c.frames.length).toBe(s.seen.frames)
      expect(s.c.bytes().byteLength).toBe(Buffer.concat(s.seen.bytes).byteLength)
      expect(s.c.bytes().every((b) => b === 0)).toBe(true)
      expect(Buffer.concat(s.seen.bytes).some((b) => b !== 0)).toBe(true)
    })

    it('aec while the speaker plays: the captured audio leaves unchanged', async () => {
      const s = setup('aec', 1000)
      await s.gate.start(s.c.sink)
      await until(() => s.seen.frames >= 50, 's.seen.frames >= 50', 60_000)
      await s.gate.stop()
      expect(Buffer.compare(s.c.bytes(), Buffer.concat(s.seen.bytes))).toBe(0)
      expect(Buffer.compare(s.c.bytes().subarray(0, 32_000), clip.subarray(0, 32_000))).toBe(0)
    })
  },
)
