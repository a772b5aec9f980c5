import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { parseWav } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { wakeTopic } from '../../src/protocol/index.js'
import { FakeLiveServer, type Script } from '../../src/testing/fake-live-server/index.js'
import { type HermeticAlsa, hermeticAlsa } from '../helpers/alsa.js'
import { freePort, mosquittoBroker, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { type NocturnProcess, startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { FIXTURES, MODEL_DIR, wavPcm } from '../helpers/wake.js'

const ROOT = join(import.meta.dirname, '../..')
const skip = missingCommands('arecord', 'aplay', 'mosquitto', 'mosquitto_passwd')

/** "Hey Jarvis" (the TTS clip of fixtures/wake) and, in the same breath, a second of a command. */
function wakeAndCommand(): Uint8Array {
  const command = parseWav(readFileSync(join(ROOT, 'fixtures/vad/speech-en-gb-f.wav')), 16_000)
  return Buffer.concat([
    wavPcm(join(FIXTURES, 'hey_jarvis.wav')),
    command.pcm.subarray(32_000, 64_000),
  ])
}

/** The model hears the wake phrase and the command, and answers out loud. */
const answering = (): Script => ({
  steps: [
    { transcribe: 'Hey Jarvis, what time is it?', afterAudioMs: 500 },
    { speak: 'time', chunkMs: 40 },
    { send: { serverContent: { turnComplete: true } } },
  ],
})

interface Speaker {
  readonly name: string
  readonly alsa: HermeticAlsa
  readonly server: FakeLiveServer
  readonly nocturn: NocturnProcess
}

interface Status {
  state: string
  reason?: string
}

/**
 * Issue 22 item 9: several speakers in one home. Two `nocturn run` processes, each with its own
 * real `arecord` on a file-backed PCM (a FIFO the test writes at the pace of real time), the REAL
 * openWakeWord detector (native runtime, the pretrained hey_jarvis head of the devDependency) and
 * its own fake Live service, share one Mosquitto. Both hear the same recording of "Hey Jarvis"
 * and a command; the hall 12 dB quieter than the kitchen, and 40 ms earlier, so the hall's claim
 * usually reaches the broker first. Exactly one answers, the louder: the kitchen opens a Live
 * session; the hall's fake service sees no connection and no frame, the hall plays nothing (not
 * even the earcon) and its status never leaves idle; the broker carried both claims.
 */
describe.skipIf(skip)('several speakers in one home, as processes', () => {
  const closers: (() => Promise<unknown> | unknown)[] = []
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
  })

  async function speaker(name: string, brokerUrl: string | undefined): Promise<Speaker> {
    const work = mkdtempSync(join(tmpdir(), `nocturn-${name}-`))
    const alsa = hermeticAlsa('fifo', { stall: false })
    const server = await FakeLiveServer.start({ scripts: [answering()], logger: silentLogger })
    closers.push(() => server.close())
    const config = writeRunConfig(
      work,
      { baseUrl: server.baseUrl, inputWav: '/nonexistent.wav', brokerUrl: brokerUrl ?? '' },
      {
        audio: { backend: 'alsa', capturePcm: alsa.capture, playbackPcm: alsa.playback },
        mqtt: brokerUrl
          ? { url: brokerUrl, deviceId: name, username: USERS.device.username }
          : undefined,
        listen: {
          wake: { models: [{ model: 'hey_jarvis' }], modelDir: MODEL_DIR, runtime: 'native' },
        },
        session: { idleTimeoutSeconds: 3 },
        // Two speakers on one machine cannot both serve the phone app on its port.
        phoneApp: { enabled: false },
      },
    )
    const nocturn = startNocturnRun(config, { apiKey: 'two-speakers-key', env: alsa.env })
    closers.push(() => nocturn.stop('SIGKILL'))
    return { name, alsa, server, nocturn }
  }

  /** The household's view of the broker: every wake claim and every status, as they came. */
  async function watch(broker: TestBroker) {
    const claims: { device: string; level: number; score: number }[] = []
    /** Per device, each state it published (`error: why` for an error). */
    const statuses = new Map<string, string[]>()
    const watcher = new MqttConnection({
      url: broker.url,
      clientId: 'household-watcher',
      ...USERS.phone,
      logger: silentLogger,
      clock: realClock(),
    })
    watcher.onMessage((topic, payload) => {
      if (topic === wakeTopic(PREFIX)) claims.push(JSON.parse(payload.toString()))
      const m = /^nocturn\/v1\/([^/]+)\/status$/.exec(topic)
      if (m?.[1] && payload.byteLength > 0) {
        const list = statuses.get(m[1]) ?? []
        const status = JSON.parse(payload.toString()) as Status
        list.push(status.reason ? `${status.state}: ${status.reason}` : status.state)
        statuses.set(m[1], list)
      }
    })
    watcher.start()
    await watcher.ready()
    await watcher.subscribe([wakeTopic(PREFIX), `${PREFIX}/+/status`])
    closers.push(() => watcher.close())
    return { claims, statuses }
  }

  /** Resolves once each speaker listens for the wake phrase and its recorder has heard a second. */
  async function ready(speakers: readonly Speaker[], feeds: RoomFeeds): Promise<void> {
    for (const s of speakers) {
      await s.nocturn.waitForLine(
        'listening for the wake phrase',
        (l) => l.msg === 'listening for the wake phrase',
        90_000,
      )
    }
    await within(
      'every recorder fed',
      () => speakers.every((_, i) => feeds.heard(i, 1000)),
      () => speakers.map((s) => s.nocturn.tail(10)).join('\n'),
    )
  }

  /** Resolves once `ok()` holds; fails after `ms` with what `said()` tells. */
  async function within(what: string, ok: () => boolean, said: () => string, ms = 30_000) {
    const end = Date.now() + ms
    await until(() => ok() || Date.now() > end, 'ok() || Date.now() > end', 60_000)
    if (!ok()) throw new Error(`no ${what} within ${ms / 1000} s:\n${said()}`)
  }

  const played = (s: Speaker) => Buffer.concat(s.alsa.played())
  const audible = (pcm: Buffer) => pcm.some((b) => b !== 0)

  it('the louder speaker answers and the other goes back to sleep', async () => {
    const broker = mosquittoBroker(await freePort())
    await broker.start()
    closers.push(() => broker.stop())
    const house = await watch(broker)
    const kitchen = await speaker('kitchen', broker.url)
    const hall = await speaker('hall', broker.url)
    const feeds = new RoomFeeds([kitchen.alsa.infile, hall.alsa.infile])
    feeds.start()
    closers.push(() => feeds.stop())
    await ready([kitchen, hall], feeds)
    // Both are on the broker, idle, and hear the wake topic (subscribed before their status).
    await within(
      'both speakers idle on the broker',
      () => ['kitchen', 'hall'].every((d) => house.statuses.get(d)?.at(-1) === 'idle'),
      () => JSON.stringify([...house.statuses]) + kitchen.nocturn.tail(10),
    )
    await new Promise((r) => setTimeout(r, 500))

    feeds.play(wakeAndCommand(), [
      { i: 0, delayMs: 40 },
      { i: 1, gain: 10 ** (-12 / 20) },
    ])
    const closed = await kitchen.nocturn.waitForEvent('session_closed', 60_000)
    const arbitrated = (s: Speaker) =>
      s.nocturn.waitForLine('wake_arbitrated', (l) => l.event === 'wake_arbitrated', 5000)
    const [k, h] = [await arbitrated(kitchen), await arbitrated(hall)]
    await until(() => feeds.idle, 'feeds.idle', 60_000)
    await new Promise((r) => setTimeout(r, 1000)) // anything the hall might still do

    // What each one decided, and what the broker carried, for a failure's message.
    const told = JSON.stringify({ claims: house.claims, kitchen: k, hall: h })
    expect([k.won, k.reason], told).toEqual([true, 'best'])
    expect(h.won, told).toBe(false)
    // The broker carried both claims, one each, usually the hall's first. The order is not what is
    // tested: a stalled hall process sends its claim late (CI saw it reach the broker 60 ms after
    // the one it made earlier), and the louder claim wins either way.
    const kitchenClaim = house.claims.find((c) => c.device === 'kitchen')
    const hallClaim = house.claims.find((c) => c.device === 'hall')
    if (hallClaim) {
      expect([h.reason, h.by], told).toEqual(['outranked', 'kitchen'])
      expect(house.claims.map((c) => c.device).sort(), told).toEqual(['hall', 'kitchen'])
      expect((kitchenClaim?.level ?? 0) - hallClaim.level).toBeGreaterThanOrEqual(10)
    } else {
      // On a loaded machine the hall's detector may fire after the kitchen's claim is in: it yields
      // at once and claims nothing, which is as right — outranked, or too late in the kitchen's
      // round to be heard in it, or after the round (the kitchen already answering).
      expect(['outranked', 'late', 'taken'], told).toContain(h.reason)
      expect(
        house.claims.map((c) => c.device),
        told,
      ).toEqual(['kitchen'])
      expect(h.waitedMs, told).toBe(0)
      if (h.reason !== 'taken') {
        expect(h.by, told).toBe('kitchen')
        expect(Number(h.byLevel) - Number(h.level), told).toBeGreaterThanOrEqual(10)
      }
    }

    // The kitchen answered: one Live session, the wake and the command sent, the reply played.
    expect(closed.turns).toBeGreaterThan(0)
    expect(kitchen.server.connections).toHaveLength(1)
    expect(kitchen.server.connections[0]?.heardAudio().byteLength).toBeGreaterThan(32_000)
    expect(audible(played(kitchen))).toBe(true)
    expect(house.statuses.get('kitchen')).toContain('speaking')
    expect(house.statuses.get('kitchen')?.at(-1)).toBe('idle')

    // The hall went back to sleep: nothing left it, nothing played, its state never left idle.
    expect(hall.server.connections).toHaveLength(0)
    expect(hall.server.received).toHaveLength(0)
    expect(audible(played(hall))).toBe(false)
    // (An `error` a loaded machine may cause, a microphone late for a moment, is not a wake.)
    const hallStates = house.statuses.get('hall') ?? []
    expect(hallStates.filter((st) => st === 'listening' || st === 'speaking')).toEqual([])
    expect(hallStates.at(-1)).toBe('idle')
    expect(hall.nocturn.saw('session_closed')).toBe(false)
  }, 180_000)

  it('a speaker with no broker answers by itself', async () => {
    const alone = await speaker('alone', undefined)
    const feeds = new RoomFeeds([alone.alsa.infile])
    feeds.start()
    closers.push(() => feeds.stop())
    await ready([alone], feeds)
    feeds.play(wakeAndCommand(), [{ i: 0, gain: 10 ** (-12 / 20) }])
    const closed = await alone.nocturn.waitForEvent('session_closed', 60_000)
    expect(closed.turns).toBeGreaterThan(0)
    expect(alone.server.connections).toHaveLength(1)
    expect(audible(played(alone))).toBe(true)
    // No broker, no claim: nobody to ask.
    expect(alone.nocturn.saw('wake_arbitrated')).toBe(false)
  }, 180_000)
})
