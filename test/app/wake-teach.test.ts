import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { parseWav } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { PhoneConversations } from '../../src/phone/conversations.js'
import { phoneRequestMessage } from '../../src/protocol/phone-side.js'
import { FakeLiveServer, type Script } from '../../src/testing/fake-live-server/index.js'
import { type HermeticAlsa, hermeticAlsa } from '../helpers/alsa.js'
import { freePort, mosquittoBroker, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { testPhoneLink } from '../helpers/device-mqtt.js'
import { enrolledHousehold } from '../helpers/household-verifier.js'
import {
  kitchenPairing,
  type NocturnProcess,
  startNocturnRun,
  writeRunConfig,
} from '../helpers/nocturn-process.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands } from '../helpers/system.js'
import { FIXTURES, wavPcm } from '../helpers/wake.js'

const ROOT = join(import.meta.dirname, '../..')
const skip = missingCommands('arecord', 'mosquitto', 'mosquitto_passwd')

/** The model hears the wake phrase and the command, and answers. */
const answering = (): Script => ({
  steps: [
    { transcribe: 'Hey Jarvis, what time is it?', afterAudioMs: 500, timeoutMs: 20_000 },
    { speak: 'time', chunkMs: 40 },
    { send: { serverContent: { turnComplete: true } } },
  ],
})

interface Wake {
  id: number
  kind: string
  phrase: string
  score: number
  confirmed: string
  said?: string
  mark?: string
  markedBy?: string
  features: number
}

/**
 * Issue 46 item 5: the household teaches its speaker, end to end. A real `nocturn run` with its
 * real `arecord` on a FIFO fed at the pace of real time, the REAL openWakeWord detector (native,
 * hey_jarvis at 0.5) behind a household verifier enrolled on flite's kal16 voice (no near-misses),
 * the real Mosquitto and the fake Live service; Anna's phone is the protocol's own client. The
 * household wakes it ("hey jarvis" and a command: confirmed, its first words kept); the same
 * voice saying "hey jarvish" wakes it too (the model hears no phrase: a false wake). Anna lists
 * the wakes and marks that one "that wasn't me"; a forged mark and a replayed one change nothing.
 * The verifier re-trains on the device, and "hey jarvish" played again opens nothing — no
 * connection, no audio to the service — while "hey jarvis" still wakes it.
 */
describe.skipIf(skip)('the household teaches its speaker', () => {
  let broker: TestBroker
  let server: FakeLiveServer
  let nocturn: NocturnProcess
  let alsa: HermeticAlsa
  let feeds: RoomFeeds
  let anna: PhoneConversations
  let intruder: MqttConnection
  let verifierFile: string
  /** Every payload on the phones' request topics, as the broker carried it. */
  const carried: Record<string, unknown>[] = []
  const closers: (() => Promise<unknown> | unknown)[] = []

  beforeAll(async () => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-teach-'))
    const models = await enrolledHousehold(work)
    verifierFile = join(models, 'hey_jarvis_v0.1.verifier.json')
    broker = mosquittoBroker(await freePort())
    await broker.start()
    closers.push(() => broker.stop())
    // Connection 1 is the near-miss: the model hears no wake phrase in it.
    server = await FakeLiveServer.start({
      scripts: (n) => (n === 1 ? { steps: [] } : answering()),
      logger: silentLogger,
    })
    closers.push(() => server.close())
    const paired = new PhoneKeyStore(join(work, 'phones')).add('anna', "Anna's phone")
    alsa = hermeticAlsa('fifo', { stall: false })
    const config = writeRunConfig(
      work,
      { baseUrl: server.baseUrl, inputWav: '/nonexistent.wav', brokerUrl: broker.url },
      {
        audio: { backend: 'alsa', capturePcm: alsa.capture, playbackPcm: alsa.playback },
        listen: {
          wake: {
            // The phrase's own threshold (0.5) wins over the verified one: "hey jarvish" reaches it.
            models: [{ model: 'hey_jarvis', threshold: 0.5 }],
            modelDir: models,
            runtime: 'native',
          },
        },
        session: { idleTimeoutSeconds: 3 },
      },
    )
    nocturn = startNocturnRun(config, { apiKey: 'teach-key', env: alsa.env })
    closers.push(() => nocturn.stop('SIGKILL'))
    feeds = new RoomFeeds([alsa.infile])
    feeds.start()
    closers.push(() => feeds.stop())
    anna = new PhoneConversations({
      link: testPhoneLink,
      pairing: kitchenPairing(broker.url, paired.key),
      ...USERS.anna,
      logger: silentLogger,
      timeoutMs: 20_000,
    })
    await anna.start()
    closers.push(() => anna.close())
    intruder = new MqttConnection({
      url: broker.url,
      clientId: 'teach-intruder',
      ...USERS.intruder,
      logger: silentLogger,
      clock: realClock(),
    })
    intruder.onMessage((_t, payload) => carried.push(JSON.parse(payload.toString())))
    intruder.start()
    await intruder.ready()
    await intruder.subscribe([`${PREFIX}/kitchen/conversations/request/+`])
    closers.push(() => intruder.close())
    await nocturn.waitForLine(
      'listening for the wake phrase',
      (l) => l.msg === 'listening for the wake phrase',
      90_000,
    )
    await nocturn.waitForEvent('conversations_subscribed', 30_000)
    await nocturn.waitFor('the recorder fed', () => feeds.heard(0, 1000))
  }, 180_000)

  afterAll(async () => {
    for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
  })

  /** Resolves once `check()` holds; fails after `ms` with what the process said last. */
  const eventually = async (what: string, check: () => boolean | Promise<boolean>, ms = 60_000) => {
    const end = Date.now() + ms
    while (!(await check())) {
      if (Date.now() > end)
        throw new Error(`no ${what} within ${ms / 1000} s:\n${nocturn.tail(30)}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const wakes = async (): Promise<Wake[]> => {
    const r = await anna.request('wakes', {})
    return r.items as Wake[]
  }
  const sessionsClosed = () => nocturn.lines.filter((l) => l.event === 'session_closed')
  const heardWakes = () => nocturn.lines.filter((l) => l.msg?.startsWith('wake phrase heard'))
  const audioSent = () => server.connections.reduce((n, c) => n + c.heardAudio().byteLength, 0)
  const near = wavPcm(join(FIXTURES, 'near-miss-hey_jarvish-kal16.wav'))
  const command = parseWav(readFileSync(join(ROOT, 'fixtures/vad/speech-en-gb-f.wav')), 16_000)
  const phrase = Buffer.concat([
    wavPcm(join(FIXTURES, 'hey_jarvis-kal16.wav')),
    command.pcm.subarray(32_000, 64_000),
  ])
  /**
   * The household's phrase under loud hiss (white noise 3 dB over it): the head half-hears it
   * (about 0.4, over the verifier's gate 0.3), the verifier refuses it (about 0.3): a miss.
   */
  const drowned = (() => {
    const clean = wavPcm(join(FIXTURES, 'hey_jarvis-kal16.wav'))
    const v = new DataView(clean.buffer, clean.byteOffset, clean.byteLength)
    const n = clean.byteLength >> 1
    let energy = 0
    for (let i = 0; i < n; i++) energy += v.getInt16(i * 2, true) ** 2
    const gain = Math.sqrt(energy / n) / 10 ** (-3 / 20) / Math.sqrt(1 / 3)
    const out = Buffer.alloc(clean.byteLength)
    let seed = 5
    for (let i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      const x = v.getInt16(i * 2, true) + gain * ((2 * seed) / 2 ** 31 - 1)
      out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(x))), i * 2)
    }
    return out
  })()
  /** Plays `pcm` into the room and waits until it has been heard and `ms` more. */
  const play = async (pcm: Uint8Array, ms: number) => {
    feeds.play(pcm, [{ i: 0 }])
    await eventually('the clip played', () => feeds.idle)
    await new Promise((r) => setTimeout(r, ms))
  }

  it('a false wake is logged, marked from the phone, and the same near-miss is refused the next time', async () => {
    // The household's own wake: confirmed by the model, its first words kept.
    await play(phrase, 0)
    await eventually('the first session closed', () => sessionsClosed().length === 1)
    // A near-miss in the same voice: the model hears no phrase, the session ends unconfirmed.
    await play(near, 0)
    await eventually('the false wake closed', () => sessionsClosed().length === 2)
    expect(sessionsClosed().map((l) => l.reason)).toEqual(['idle', 'unconfirmed'])
    // Listed on the phone, newest first, once the features around each are kept.
    await eventually('the features kept', async () => (await wakes()).every((w) => w.features > 0))
    const [falseWake, ownWake, ...rest] = await wakes()
    expect(rest).toEqual([])
    expect(ownWake).toMatchObject({ kind: 'wake', phrase: 'hey jarvis', confirmed: 'yes' })
    expect(ownWake?.said).toBe('Hey Jarvis, what time is it?')
    expect(falseWake).toMatchObject({ kind: 'wake', phrase: 'hey jarvis', confirmed: 'no' })
    expect(falseWake?.said).toBeUndefined()
    expect(falseWake?.score).toBeGreaterThanOrEqual(0.5)
    const id = falseWake?.id ?? -1
    const enrolled = readFileSync(verifierFile, 'utf8')

    // Forged: signed with a key that is not Anna's. Refused, nothing marked, nothing taught.
    const topic = `${PREFIX}/kitchen/conversations/request/anna`
    const other = { device: 'kitchen', phone: 'anna', key: new Uint8Array(32).fill(7) }
    const forged = phoneRequestMessage(
      other,
      'forged-1',
      'mark_wake',
      { wake: id, mark: 'not_me' },
      Date.now(),
    )
    await intruder.publish(topic, JSON.stringify(forged))
    await nocturn.waitForLine('the forged mark refused', (l) => l.reason === 'bad-mac')
    expect((await wakes()).find((w) => w.id === id)?.mark).toBeUndefined()
    expect(readFileSync(verifierFile, 'utf8')).toBe(enrolled)

    // Anna's mark: answered with what the speaker learnt.
    const marked = await anna.request('mark_wake', { wake: id, mark: 'not_me' })
    expect(marked.done).toMatchObject({
      wake: { id, mark: 'not_me', markedBy: 'anna' },
      learnt: true,
    })
    const done = marked.done as { negatives: number; positives: number; refused: number }
    expect(done.negatives).toBeGreaterThan(0)
    expect(done.positives).toBeGreaterThan(0)
    expect(done.refused).toBe(done.negatives)
    const taught = JSON.parse(readFileSync(verifierFile, 'utf8')) as { taught?: unknown }
    expect(taught.taught).toMatchObject({ negatives: done.negatives })

    // Replayed as the broker carried it: refused as a nonce seen before, taught nothing more.
    const sent = carried.find((m) => m.op === 'mark_wake' && m.id !== 'forged-1')
    expect(sent).toBeDefined()
    const after = readFileSync(verifierFile, 'utf8')
    await intruder.publish(topic, JSON.stringify(sent))
    await nocturn.waitForLine('the replayed mark refused', (l) => l.reason === 'replayed-nonce')
    expect(nocturn.lines.filter((l) => l.msg === 'wake verifier taught')).toHaveLength(1)
    expect(readFileSync(verifierFile, 'utf8')).toBe(after)

    // The same near-miss again: refused by the taught verifier — no wake, no connection, no audio.
    const connections = server.connections.length
    const sentBefore = audioSent()
    const wakesBefore = heardWakes().length
    await play(near, 3000)
    expect(heardWakes()).toHaveLength(wakesBefore)
    expect(server.connections).toHaveLength(connections)
    expect(audioSent()).toBe(sentBefore)
    expect(await wakes()).toHaveLength(2)

    // The household's own phrase still wakes it.
    await play(phrase, 0)
    await eventually('the third session closed', () => sessionsClosed().length === 3)
    expect(server.connections).toHaveLength(connections + 1)
    expect((await wakes())[0]).toMatchObject({ confirmed: 'yes', phrase: 'hey jarvis' })
  }, 240_000)

  // What "it missed me just now" does today, after the mark above: the head's best windows of the
  // last seconds are kept as a positive, and the verifier re-trains on every mark with them — but
  // a positive is held at the score the verifier gives it (never pushed up: pushed up, the bench's
  // false wakes rose), so the note keeps a later lesson from refusing that phrase further; it does
  // not make a refused phrase wake. The phrase drowned in hiss is refused again after it.
  it('a missed-wake note keeps the best windows heard as a positive and re-trains, but the refused phrase stays refused', async () => {
    const connections = server.connections.length
    const wakesBefore = heardWakes().length
    const listed = (await wakes()).length
    // A note looks 10 s back: the household's own phrase played last must be out of that reach.
    await new Promise((r) => setTimeout(r, 10_500))
    await play(drowned, 500)
    expect(heardWakes()).toHaveLength(wakesBefore)
    const taughtBefore = nocturn.lines.filter((l) => l.msg === 'wake verifier taught').length
    const noted = await anna.request('missed_wake', {})
    const done = noted.done as { wake: Wake; learnt: boolean; positives?: number }
    expect(done.wake).toMatchObject({ kind: 'missed', phrase: 'hey jarvis' })
    // The best window and its neighbours (one, at an edge).
    expect(done.wake.features).toBeGreaterThanOrEqual(2)
    expect(done.wake.score).toBeGreaterThanOrEqual(0.3)
    // Re-trained on the mark above with the note's windows among the positives.
    expect(done.learnt).toBe(true)
    expect(nocturn.lines.filter((l) => l.msg === 'wake verifier taught')).toHaveLength(
      taughtBefore + 1,
    )
    const [note] = await wakes()
    expect(note).toMatchObject({ id: done.wake.id, kind: 'missed', features: done.wake.features })
    expect(await wakes()).toHaveLength(listed + 1)
    // The same phrase again: still refused — no wake, no connection.
    await play(drowned, 3000)
    expect(heardWakes()).toHaveLength(wakesBefore)
    expect(server.connections).toHaveLength(connections)
    // And the household's own phrase still wakes it.
    await play(phrase, 0)
    await eventually('the fourth session closed', () => sessionsClosed().length === 4)
  }, 120_000)
})
