import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_WAKE_BACKLOG_MS } from '../../src/core/defaults.js'
import { silentLogger } from '../../src/core/logger.js'
import type { WakeArbiter } from '../../src/ports/wake-arbiter.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { type FakeWakeWord, wakeMarkFrame } from '../../src/testing/fake-wake-word.js'
import { EARCON_MS } from '../../src/tools/chime.js'
import { until } from '../helpers/wait.js'
import { speech16k, wakeWorld } from './wake-world.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Issue 22 items 1, 4 and 8: the wake stage of the listening chain, with the fake detector below
 * its port and the real WebRTC VAD. A detection opens a session only when the speech detector
 * heard a voice around it, not within the refractory time, and only on the speaker that won the
 * claim; the room hears that it was heard (the earcon, the LED) before anything is sent.
 */
describe('the wake stage', () => {
  const closers: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c()
  })

  async function world(arbiter?: WakeArbiter) {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    closers.push(() => server.close())
    const w = await wakeWorld(server, { confirm: false, ...(arbiter && { arbiter }) })
    closers.push(() => w.close())
    return { server, w }
  }

  it('opens nothing on a detection with no voice around it (the speech detector disagrees)', async () => {
    const { server, w } = await world()
    await w.say(new Uint8Array(32_000)) // a quiet second
    w.frame(wakeMarkFrame())
    await sleep(400)
    await w.say(new Uint8Array(6400))
    expect(w.log.withEvent('wake_rejected')).toHaveLength(1)
    expect(server.connections).toHaveLength(0)
    expect(w.speaker.writtenBytes).toBe(0)
    expect(w.states).toEqual([])
  }, 20_000)

  it('plays the earcon and shows listening before anything goes over the network', async () => {
    const { server, w } = await world()
    await w.sayWake()
    await server.waitForConnection(0, 5000)
    expect(w.order.slice(0, 2)).toEqual(['earcon@0', 'led:listening@0'])
    // The earcon is short (< 150 ms at the speaker's rate) and was the first thing played.
    expect((w.earcon.byteLength / 2 / w.speaker.sampleRateHz) * 1000).toBe(EARCON_MS)
    expect(EARCON_MS).toBeLessThan(150)
    // The fake speaker plays on the real clock: the connection can come before the earcon's end.
    await until(
      () => w.speaker.audio().byteLength >= w.earcon.byteLength,
      'w.speaker.audio().byteLength >= w.earcon.byteLength',
      60_000,
    )
    expect(Buffer.from(w.speaker.audio().subarray(0, w.earcon.byteLength))).toEqual(
      Buffer.from(w.earcon),
    )
  }, 20_000)

  it('ignores a second detection within the refractory time', async () => {
    const { server, w } = await world()
    await w.sayWake()
    await server.waitForConnection(0, 5000)
    // Within 2 s of the first: the detector's echo of the same phrase, or a repeat.
    await w.say(speech16k('speech-en-gb-f.wav', 1000, 300))
    w.frame(wakeMarkFrame())
    await until(
      () => w.log.records.some((r) => r.msg === 'wake ignored: refractory'),
      "w.log.records.some((r) => r.msg === 'wake ignored: refractory')",
      60_000,
    )
    expect(w.log.records.filter((r) => r.msg === 'wake phrase heard')).toHaveLength(1)
    expect(w.speaker.drops).toEqual([]) // not taken as a barge-in either
  }, 20_000)

  it('tells the detector when no voice is near, so a quiet room can be left unscored', async () => {
    const { w } = await world()
    const fake = w.detector as FakeWakeWord
    await w.say(new Uint8Array(32_000)) // a quiet second: no voice, nothing worth scoring
    const quiet = fake.voiceNearby.length
    await w.say(speech16k('speech-en-gb-f.wav', 1000, 1000))
    const spoken = fake.voiceNearby.length
    await w.say(new Uint8Array(96_000)) // three quiet seconds: the agree window (1.5 s) runs out
    const hints = fake.voiceNearby
    expect(hints.slice(0, quiet).every((v) => !v)).toBe(true)
    // The voice is heard within its first frames, and the hint holds through it.
    const firstVoiced = hints.indexOf(true)
    expect(firstVoiced).toBeGreaterThanOrEqual(quiet)
    expect(firstVoiced).toBeLessThan(quiet + 10)
    expect(hints.slice(firstVoiced, spoken).filter((v) => !v).length).toBeLessThan(3)
    // Still near for the agree window after the last voice (and the VAD's own hangover), then quiet.
    const lastVoiced = hints.lastIndexOf(true)
    expect(lastVoiced).toBeGreaterThanOrEqual(spoken + 50)
    expect(lastVoiced).toBeLessThan(spoken + 95)
    expect(hints.slice(lastVoiced + 1).length).toBeGreaterThan(50)
  }, 20_000)

  it('a wake just after an unmute sends nothing said before the mute, nor is made of it', async () => {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    closers.push(() => server.close())
    let resets = 0
    const w = await wakeWorld(server, { confirm: false, onDetectorReset: () => resets++ })
    closers.push(() => w.close())
    // Said, then muted: the last words before the press are in the wake stage's 2 s ring.
    const before = speech16k('speech-en-gb-f.wav', 1000, 1000)
    await w.say(before)
    w.mic.setMuted(true)
    await w.say(new Uint8Array(32_000)) // a muted second: no frame reaches the stage
    w.mic.setMuted(false)
    expect(resets).toBe(0)
    await w.sayWake()
    // The detector started afresh at the first frame after the mute, before the phrase.
    expect(resets).toBe(1)
    await server.waitForConnection(0, 5000)
    await until(
      () => (server.connections[0]?.heardAudio().byteLength ?? 0) >= 32_000,
      '(server.connections[0]?.heardAudio().byteLength ?? 0) >= 32_000',
      60_000,
    )
    const heard = server.connections[0]?.heardAudio() ?? Buffer.alloc(0)
    // The wake phrase went, from its first frame; not one 20 ms frame from before the mute.
    const phrase = speech16k()
    expect(heard.indexOf(Buffer.from(phrase.subarray(0, 640)))).toBeGreaterThanOrEqual(0)
    for (let o = 0; o + 640 <= before.byteLength; o += 640) {
      expect(heard.indexOf(Buffer.from(before.subarray(o, o + 640))), `frame at ${o}`).toBe(-1)
    }
  }, 20_000)

  it('a wake still being scored when the mute is pressed opens nothing, even unmuted at once', async () => {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    closers.push(() => server.close())
    // Scoring takes 300 ms here (about 0.4 s at the p90 on a board): the press lands first.
    const w = await wakeWorld(server, { confirm: false, detectorLatencyMs: 300 })
    closers.push(() => w.close())
    const room = new Uint8Array(32_000)
    // The phrase, and the mute at once; it stays on past the scoring.
    await w.sayWake()
    w.driver.setMuted(true)
    await sleep(600)
    w.driver.setMuted(false)
    await w.say(room)
    // The phrase again, and a double tap: muted and unmuted before the scoring is done.
    await w.sayWake()
    w.driver.setMuted(true)
    await sleep(100)
    w.driver.setMuted(false)
    await w.say(room)
    expect(w.order.filter((o) => o.startsWith('earcon'))).toEqual([])
    expect(w.seenConnections()).toBe(0)
    expect(w.store.listConversations()).toEqual([])
    // Unmuted, the stage hears as before: the next phrase opens the session.
    await w.sayWake()
    await server.waitForConnection(0, 5000)
    expect(w.order.filter((o) => o.startsWith('earcon'))).toEqual(['earcon@0'])
  }, 20_000)

  it('stays asleep when another speaker wins the claim', async () => {
    const claims: WakeDetection[] = []
    const { server, w } = await world({
      claim: async (d) => {
        claims.push(d)
        return false
      },
      answering: () => {},
      close: async () => {},
    })
    await w.sayWake()
    await until(() => claims.length > 0, 'claims.length > 0', 60_000)
    await sleep(300)
    expect(claims[0]?.phrase).toBe('hey jarvis')
    expect(server.connections).toHaveLength(0)
    expect(w.order).toEqual([])
  }, 20_000)

  it('a wake during its own session is taken at once: the arbiter is told, not asked', async () => {
    const asked: string[] = []
    let won: ((v: boolean) => void) | undefined
    const { server, w } = await world({
      claim: (d) => {
        asked.push(`claim ${d.phrase}`)
        // Never settles by itself: a barge-in that waited for a claim would wait for ever.
        return asked.length === 1 ? Promise.resolve(true) : new Promise((r) => (won = r))
      },
      answering: (d) => {
        asked.push(`answering ${d.phrase}`)
        w.order.push('told')
      },
      close: async () => {},
    })
    await w.sayWake()
    await server.waitForConnection(0, 5000)
    await sleep(2100) // past the refractory time
    const at = w.order.length
    await w.sayWake()
    await until(() => asked.length === 2, 'asked.length === 2', 60_000)
    expect(asked).toEqual(['claim hey jarvis', 'answering hey jarvis'])
    expect(won).toBeUndefined()
    // The barge-in's earcon (the driver's drop before it) came first, the arbiter was told after.
    expect(w.order.slice(at).filter((o) => o === 'told' || o.startsWith('earcon'))).toEqual([
      'earcon@1',
      'told',
    ])
    expect(server.connections).toHaveLength(1)
  }, 20_000)

  it('takes no wake whose claim is won after a mute, even once unmuted', async () => {
    let won: ((v: boolean) => void) | undefined
    const { server, w } = await world({
      claim: () => new Promise<boolean>((resolve) => (won = resolve)),
      answering: () => {},
      close: async () => {},
    })
    await w.sayWake()
    await until(() => won !== undefined, 'won !== undefined', 60_000)
    // A double tap while the broker is asked; the claim is won after it.
    w.driver.setMuted(true)
    w.driver.setMuted(false)
    won?.(true)
    await sleep(300)
    expect(w.log.records.map((r) => r.msg)).toContain(
      'wake dropped: muted, or a session ended, while claimed',
    )
    expect(server.connections).toHaveLength(0)
    // The LED showed the mute and its undoing, and nothing else: no earcon, no listening.
    expect(w.order).toEqual(['led:muted@0', 'led:idle@0'])
  }, 20_000)
  /** The offset of the fake detector's mark (the phrase's end) in what the model heard. */
  const markAt = (heard: Buffer) => heard.indexOf(Buffer.from(wakeMarkFrame().subarray(0, 8)))

  it('a wake scored late (a board behind) still sends the 2 s before its phrase, not just the 2 s before now', async () => {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    closers.push(() => server.close())
    const w = await wakeWorld(server, { confirm: false, detectorLatencyMs: 1500 })
    closers.push(() => w.close())
    await w.say(speech16k('speech-en-gb-f.wav', 500, 1000))
    await w.sayWake()
    // The command goes on while the detector catches up.
    await w.say(speech16k('speech-en-gb-f.wav', 0, 2500))
    await server.waitForConnection(0, 5000)
    const conn = server.connections[0]
    await until(
      () => (conn?.heardBytes() ?? 0) >= 3 * 32_000,
      '(conn?.heardBytes() ?? 0) >= 3 * 32_000',
      60_000,
    )
    const heard = conn?.heardAudio() ?? Buffer.alloc(0)
    // Scored at once, the pre-roll holds the 2 s up to the phrase's end; 1.5 s late, the same 2 s
    // (less a frame's rounding) — not the last 0.5 s of the phrase.
    expect(markAt(heard)).toBeGreaterThanOrEqual(2 * 32_000 - 1280)
    expect(markAt(heard)).toBeLessThanOrEqual(2 * 32_000 + 640)
    // The log says how late it was taken: about the detector's 1.5 s (frames come 20 ms apart).
    const taken = w.log.records.find((r) => r.msg === 'wake phrase heard')
    expect(taken?.fields.lateMs).toBeGreaterThanOrEqual(1400)
  }, 20_000)

  it('a wake scored more than the backlog (3 s) after it was said is dropped: no chime, nothing sent', async () => {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    closers.push(() => server.close())
    const w = await wakeWorld(server, { confirm: false, detectorLatencyMs: 3600 })
    closers.push(() => w.close())
    await w.sayWake()
    await w.say(speech16k('speech-en-gb-f.wav', 0, 4000))
    await until(
      () => w.log.withEvent('wake_rejected').length > 0,
      "w.log.withEvent('wake_rejected').length > 0",
      60_000,
    )
    const [rejected] = w.log.withEvent('wake_rejected')
    expect(rejected?.fields.why).toBe('late')
    expect(rejected?.fields.lateMs).toBeGreaterThan(DEFAULT_WAKE_BACKLOG_MS)
    await sleep(300)
    expect(server.connections).toHaveLength(0)
    expect(w.speaker.writtenBytes).toBe(0)
    expect(w.order).toEqual([])
  }, 20_000)
})
