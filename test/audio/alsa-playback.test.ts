import { afterEach, describe, expect, it } from 'vitest'
import { createAlsaSpeaker } from '../../src/adapters/alsa/alsa-speaker.js'
import { bytesForMs } from '../../src/audio/pcm.js'
import type { NocturnError } from '../../src/core/errors.js'
import { silentLogger } from '../../src/core/logger.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { hermeticAlsa, processExists } from '../helpers/alsa.js'
import { indexOf, vadClip } from '../helpers/fixtures.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

const skip = missingCommands('aplay', 'mkfifo')
const RATE = 24_000
// Model audio stands in as the speech fixtures' bytes; played at 24 kHz they are just a payload.
const reply = Buffer.concat([vadClip('speech-en-gb-f.wav'), vadClip('speech-en-us-m.wav')])
const second = vadClip('speech-de-m.wav')
const fast = { initialMs: 20, maxMs: 200, healthyMs: 5000 }

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of closers.splice(0)) await c()
})

/**
 * The paced speaker runs on a virtual clock (pacing is exact and instant); the `aplay` children and
 * the file PCM they write to are real. The file PCM is unpaced, so whatever is fed lands at once.
 */
function speaker(stallMs?: number, logger = silentLogger) {
  const alsa = hermeticAlsa(new Uint8Array(640))
  const clock = new VirtualClock()
  const errors: NocturnError[] = []
  const s = createAlsaSpeaker({
    device: alsa.playback,
    clock,
    env: alsa.env,
    backoff: fast,
    onError: (e) => errors.push(e),
    // Virtual time outruns the real aplay; only the hung-player test watches for stalls.
    stallMs: stallMs ?? Number.POSITIVE_INFINITY,
    logger,
    // The file PCM holds back a whole buffer (1 s) until more comes: pad past it.
    endPaddingUs: 1_020_000,
  })
  closers.push(() => s.speaker.close())
  return { alsa, clock, errors, ...s }
}

describe.skipIf(skip)('ALSA playback through a real aplay on a file-backed PCM', () => {
  it('writes the payload, byte for byte, paced to the clock', async () => {
    const s = speaker()
    s.speaker.write(reply.subarray(0, 48_000))
    s.speaker.write(reply.subarray(48_000))
    // Before any time passes only the 20 ms lead is in the device.
    expect(s.speaker.queuedMs()).toBeCloseTo((reply.byteLength / 48_000) * 1000, 6)
    expect(s.speaker.playedMs()).toBe(0)
    await s.clock.advance((reply.byteLength / 48_000) * 1000 + 100)
    expect(s.speaker.queuedMs()).toBe(0)
    await until(
      () => indexOf(Buffer.concat(s.alsa.played()), reply) >= 0,
      'indexOf(Buffer.concat(s.alsa.played()), reply) >= 0',
      60_000,
    )
    expect(s.errors).toEqual([])
  })

  it('drop mid-utterance: output stops, the next player is ready and the next reply is whole', async () => {
    const s = speaker()
    const firstPid = s.device.pid as number
    s.speaker.write(reply)
    await s.clock.advance(1000)
    // Virtual time ran ahead of the real aplay: let it take in what a second of playing would
    // have handed it before the drop, as a real second would (else the kill races its first write).
    await until(
      () => (s.alsa.played()[0]?.byteLength ?? 0) >= 4800,
      '(s.alsa.played()[0]?.byteLength ?? 0) >= 4800',
      60_000,
    )
    const report = s.speaker.drop()
    expect(report.playedMs).toBe(1000)
    expect(report.discardedMs).toBeCloseTo((reply.byteLength / 48_000) * 1000 - 1000, 6)
    expect(s.speaker.queuedMs()).toBe(0)
    expect(s.speaker.playedMs()).toBe(0)
    // The killed player is gone (reaped, no zombie) and its successor already runs.
    await until(() => !processExists(firstPid), '!processExists(firstPid)', 60_000)
    expect(s.device.pid).toBeDefined()
    expect(s.device.pid).not.toBe(firstPid)
    await s.clock.advance(3000)

    s.speaker.write(second)
    await s.clock.advance((second.byteLength / 48_000) * 1000 + 100)
    await until(
      () => s.alsa.played().some((f) => indexOf(f, second) >= 0),
      's.alsa.played().some((f) => indexOf(f, second) >= 0)',
      60_000,
    )
    const files = s.alsa.played()
    // Nothing after 1000 ms + the 500 ms lead of the first reply was ever handed to a device.
    const fed = bytesForMs(RATE, 1500)
    const all = Buffer.concat(files)
    // (Part of that was still inside the killed player: killing it is what discards it.)
    expect(indexOf(files[0] as Buffer, reply.subarray(0, 4800))).toBe(0)
    expect(indexOf(all, reply.subarray(fed, fed + 960))).toBe(-1)
    expect(indexOf(all, reply.subarray(bytesForMs(RATE, 2000), bytesForMs(RATE, 2100)))).toBe(-1)
    // The second reply went to the new player, from its very first sample.
    const secondFile = files.findIndex((f) => indexOf(f, second) >= 0)
    expect(indexOf(files[0] as Buffer, second)).toBe(-1)
    expect(secondFile).toBeGreaterThan(0)
    expect(s.errors).toEqual([])
  })

  it('recovers from a killed aplay: an error, a new child after backoff, no zombie, audio again', async () => {
    const s = speaker()
    await until(() => s.device.pid !== undefined, 's.device.pid !== undefined', 60_000)
    const first = s.device.pid as number
    process.kill(first, 'SIGKILL')
    await until(() => s.errors.length > 0, 's.errors.length > 0', 60_000)
    expect(s.errors[0]?.code).toBe('NOC_ERR_AUDIO_DEVICE_FAILED')
    expect(s.errors[0]?.message).toMatch(
      /aplay on playback device "nocturn_play" was killed by SIGKILL/,
    )
    // The backoff runs on the speaker's (virtual) clock: nothing restarts until it has passed.
    await new Promise((r) => setTimeout(r, 50))
    expect(s.device.pid).toBeUndefined()
    await s.clock.advance(fast.initialMs)
    await until(
      () => s.device.pid !== undefined && s.device.pid !== first,
      's.device.pid !== undefined && s.device.pid !== first',
      60_000,
    )
    expect(processExists(first)).toBe(false)
    s.speaker.write(second)
    await s.clock.advance((second.byteLength / 48_000) * 1000 + 100)
    await until(
      () => s.alsa.played().some((f) => indexOf(f, second) >= 0),
      's.alsa.played().some((f) => indexOf(f, second) >= 0)',
      60_000,
    )
  })

  it('a hung aplay (SIGSTOP mid-reply) is noticed, replaced, and what it held is dropped', async () => {
    const log = new MemoryLogger()
    const s = speaker(500, log)
    await until(() => s.device.pid !== undefined, 's.device.pid !== undefined', 60_000)
    const hung = s.device.pid as number
    s.speaker.write(reply)
    // Play 1.2 s for real: aplay reads each period as it is fed (the file PCM passes on all but
    // its last buffer, 1 s, of the 1.7 s fed by then).
    for (let t = 0; t < 1200; t += 40) {
      await s.clock.advance(40)
      await new Promise((r) => setTimeout(r, 5))
    }
    await until(
      () => (s.alsa.played()[0]?.byteLength ?? 0) >= bytesForMs(RATE, 150),
      '(s.alsa.played()[0]?.byteLength ?? 0) >= bytesForMs(RATE, 150)',
      60_000,
    )
    process.kill(hung, 'SIGSTOP')
    try {
      // The speaker keeps feeding the stopped player; after 500 ms without progress it gives up.
      for (let t = 0; t < 1000 && s.device.pid === hung; t += 40) {
        await s.clock.advance(40)
        await new Promise((r) => setTimeout(r, 5))
      }
      expect(s.device.pid).not.toBe(hung)
      await until(() => !processExists(hung), '!processExists(hung)', 60_000)
    } finally {
      if (processExists(hung)) process.kill(hung, 'SIGCONT')
    }
    const stall = log.records.find((e) => e.fields.event === 'speaker_stalled')
    expect(stall?.level).toBe('warn')
    const at = s.speaker.playedMs()
    // Play the rest for real too (virtual time alone would outrun the new aplay's start-up).
    await until(
      () => s.device.progress() !== undefined,
      's.device.progress() !== undefined',
      60_000,
    )
    for (let t = at; t < (reply.byteLength / 48_000) * 1000 + 500; t += 40) {
      await s.clock.advance(40)
      await new Promise((r) => setTimeout(r, 10))
    }
    const tail = reply.subarray(reply.byteLength - 960)
    await until(
      () => indexOf(s.alsa.played()[1] ?? Buffer.alloc(0), tail) > 0,
      'indexOf(s.alsa.played()[1] ?? Buffer.alloc(0), tail) > 0',
      60_000,
    )
    const [first, next] = s.alsa.played() as [Buffer, Buffer]
    // The new player plays on from where the reply is now: what the hung one held (due while it
    // hung) never reaches the speaker, and the rest of the reply does, to its last sample.
    const resumedAt = indexOf(reply, next.subarray(0, 960))
    expect(resumedAt).toBeGreaterThan(first.byteLength)
    expect(resumedAt).toBeGreaterThanOrEqual(bytesForMs(RATE, at - 200))
    expect(s.errors).toEqual([])
  })

  it('a frozen aplay (SIGSTOP after it took a short reply whole) is replaced before the next reply plays', async () => {
    const log = new MemoryLogger()
    const s = speaker(1000, log)
    await until(() => s.device.pid !== undefined, 's.device.pid !== undefined', 60_000)
    const frozen = s.device.pid as number
    // A reply shorter than the lead: handed to aplay whole at once, nothing left to feed.
    const short = reply.subarray(0, bytesForMs(RATE, 600))
    s.speaker.write(short)
    s.speaker.endOfReply()
    for (let t = 0; t < 700; t += 40) {
      await s.clock.advance(40)
      await new Promise((r) => setTimeout(r, 5))
    }
    await until(
      () => (s.alsa.played()[0]?.byteLength ?? 0) >= bytesForMs(RATE, 300),
      '(s.alsa.played()[0]?.byteLength ?? 0) >= bytesForMs(RATE, 300)',
      60_000,
    )
    process.kill(frozen, 'SIGSTOP')
    try {
      // The next reply, short too: it must reach a player within a second, not wait for SIGCONT.
      s.speaker.write(second.subarray(0, bytesForMs(RATE, 500)))
      s.speaker.endOfReply()
      for (let t = 0; t < 1000 && s.device.pid === frozen; t += 40) {
        await s.clock.advance(40)
        await new Promise((r) => setTimeout(r, 5))
      }
      expect(s.device.pid).not.toBe(frozen)
      await until(() => !processExists(frozen), '!processExists(frozen)', 60_000)
    } finally {
      if (processExists(frozen)) process.kill(frozen, 'SIGCONT')
    }
    expect(log.records.find((e) => e.fields.event === 'speaker_stalled')?.level).toBe('warn')
    // The reply after it plays on the new player, with the old one never resumed.
    const next = second.subarray(bytesForMs(RATE, 500) - 960, bytesForMs(RATE, 500))
    s.speaker.write(second.subarray(bytesForMs(RATE, 500)))
    s.speaker.endOfReply()
    await until(
      () => s.device.progress() !== undefined,
      's.device.progress() !== undefined',
      60_000,
    )
    for (let t = 0; t < (second.byteLength / 48_000) * 1000 + 500; t += 40) {
      await s.clock.advance(40)
      await new Promise((r) => setTimeout(r, 5))
    }
    await until(() => s.alsa.played().length >= 2, 's.alsa.played().length >= 2', 60_000)
    const tail = second.subarray(second.byteLength - 960)
    await until(
      () => indexOf(s.alsa.played()[1] ?? Buffer.alloc(0), tail) >= 0,
      'indexOf(s.alsa.played()[1] ?? Buffer.alloc(0), tail) >= 0',
      60_000,
    )
    expect(indexOf(s.alsa.played()[0] as Buffer, next)).toBe(-1)
    expect(s.errors).toEqual([])
  })

  it('an unknown playback device is a clear error naming `nocturn devices`', async () => {
    const alsa = hermeticAlsa(new Uint8Array(640))
    const errors: NocturnError[] = []
    const s = createAlsaSpeaker({
      device: 'speaker_that_is_not_there',
      clock: new VirtualClock(),
      logger: silentLogger,
      env: alsa.env,
      backoff: fast,
      onError: (e) => errors.push(e),
    })
    closers.push(() => s.speaker.close())
    await until(() => errors.length > 0, 'errors.length > 0', 60_000)
    expect(errors[0]?.code).toBe('NOC_ERR_AUDIO_DEVICE_UNKNOWN')
    expect(errors[0]?.message).toBe(
      'ALSA playback device "speaker_that_is_not_there" does not exist here; run "nocturn devices" to list the ones that do',
    )
  })
})
