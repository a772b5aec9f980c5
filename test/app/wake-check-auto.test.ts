import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { DEBIAN_MODEL_DIR } from '../../src/adapters/pocketsphinx/keyphrase-check.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { silentLogger } from '../../src/core/logger.js'
import type { StatusMessage } from '../../src/protocol/index.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { freePort, mosquittoBroker, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { type NocturnProcess, startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { RoomFeeds } from '../helpers/room-feed.js'
import { missingCommands, systemSkip } from '../helpers/system.js'
import { FIXTURES, MODEL_DIR, wavPcm } from '../helpers/wake.js'

const CHECK_MODEL = join(DEBIAN_MODEL_DIR, 'en-us', 'mdef')
const skip =
  missingCommands('arecord', 'mosquitto', 'mosquitto_passwd', 'pocketsphinx_continuous') ??
  (existsSync(CHECK_MODEL) ? undefined : systemSkip([CHECK_MODEL]))

/**
 * A PATH as on a machine without Debian's pocketsphinx: a folder of links to every command on
 * this one's PATH but `pocketsphinx_continuous`.
 */
function pathWithout(command: string): string {
  const farm = mkdtempSync(join(tmpdir(), 'nocturn-no-pocketsphinx-'))
  const bin = join(farm, 'bin')
  mkdirSync(bin)
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || !existsSync(dir)) continue
    for (const name of readdirSync(dir)) {
      if (name === command || existsSync(join(bin, name))) continue
      symlinkSync(join(dir, name), join(bin, name))
    }
  }
  return bin
}

/**
 * listen.localCheck.enabled `auto`, the default, through the composed appliance: a real
 * `nocturn run` with its real `arecord` on a FIFO fed at the pace of real time, the real detector
 * (hey_jarvis at 0.5), the real pocketsphinx check, the real Mosquitto and the fake Live service,
 * which hears no wake phrase. No `localCheck` in the configuration. A near-miss that fires the
 * head ("hey jarvish", flite kal16) is refused by the check — but the check has not yet earned the
 * right to hold audio, so it runs in shadow: the near-miss's audio reaches the service as it did
 * without a check, the wake log keeps the check's refusal beside the model's, and the retained
 * status says `shadow`, 0 of 5, one wake it would have kept. With pocketsphinx not installed the
 * speaker runs as before: one info line, `off` and why on the status, and no fault.
 */
describe.skipIf(skip)('the local wake check in auto, composed', () => {
  let broker: TestBroker
  let server: FakeLiveServer
  let watcher: MqttConnection
  const statuses: StatusMessage[] = []
  const closers: (() => Promise<unknown> | unknown)[] = []

  beforeAll(async () => {
    broker = mosquittoBroker(await freePort())
    await broker.start()
    closers.push(() => broker.stop())
    // The model hears no wake phrase: every wake is unconfirmed.
    server = await FakeLiveServer.start({ scripts: () => ({ steps: [] }), logger: silentLogger })
    closers.push(() => server.close())
    watcher = new MqttConnection({
      url: broker.url,
      clientId: 'check-watcher',
      username: USERS.phone.username,
      password: USERS.phone.password,
      logger: silentLogger,
      clock: realClock(),
    })
    watcher.onMessage((_t, payload) => statuses.push(JSON.parse(payload.toString())))
    watcher.start()
    await watcher.ready()
    await watcher.subscribe([`${PREFIX}/kitchen/status`])
    closers.push(() => watcher.close())
  }, 60_000)

  afterAll(async () => {
    for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
  })

  /** A `nocturn run` of its own (store, recorder), listening; the near-miss played once. */
  const run = async (env: NodeJS.ProcessEnv = {}) => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-check-auto-'))
    const alsa = hermeticAlsa('fifo', { stall: false })
    const config = writeRunConfig(
      work,
      { baseUrl: server.baseUrl, inputWav: '/nonexistent.wav', brokerUrl: broker.url },
      {
        audio: { backend: 'alsa', capturePcm: alsa.capture, playbackPcm: alsa.playback },
        listen: {
          wake: { models: [{ model: 'hey_jarvis' }], modelDir: MODEL_DIR, runtime: 'native' },
        },
        session: { idleTimeoutSeconds: 3 },
      },
    )
    const nocturn: NocturnProcess = startNocturnRun(config, {
      apiKey: 'check-key',
      env: { ...alsa.env, ...env },
    })
    const feeds = new RoomFeeds([alsa.infile])
    feeds.start()
    const stop = async () => {
      feeds.stop()
      await nocturn.stop('SIGKILL')
    }
    closers.push(stop)
    await nocturn.waitForLine(
      'listening for the wake phrase',
      (l) => l.msg === 'listening for the wake phrase',
      90_000,
    )
    await nocturn.waitFor('the recorder fed', () => feeds.heard(0, 1000))
    const sentBefore = audioSent()
    feeds.play(wavPcm(join(FIXTURES, 'near-miss-hey_jarvish-kal16.wav')), [{ i: 0 }])
    await nocturn.waitForEvent('session_closed', 60_000)
    return { nocturn, sent: audioSent() - sentBefore, store: join(work, 'nocturn.db'), stop }
  }
  const audioSent = () => server.connections.reduce((n, c) => n + c.heardAudio().byteLength, 0)
  const lastStatus = () => statuses.at(-1)

  it('in shadow the near-miss reaches the model as before; the wake log keeps the refusal', async () => {
    const r = await run()
    expect(
      r.nocturn.lines.filter((l) => l.msg === 'wake phrase heard: opening a session'),
    ).toHaveLength(1)
    // In shadow the check holds nothing: more than half a second of the room reached the service.
    expect(r.sent).toBeGreaterThan(16_000)
    expect(r.nocturn.lines.filter((l) => l.event === 'wake_refused_locally')).toEqual([])
    expect(
      r.nocturn.lines.filter((l) => l.event === 'wake_checked_in_shadow').map((l) => l.agreed),
    ).toEqual([false])
    await r.nocturn.waitFor('the status', () => lastStatus()?.wakeCheck?.kept === 1)
    expect(lastStatus()?.wakeCheck).toEqual({ state: 'shadow', streak: 0, of: 5, kept: 1 })
    expect(lastStatus()?.state).not.toBe('error')
    await r.stop()
    const store = new SqliteStore(r.store)
    try {
      expect(store.wakes.wakes({ limit: 5 }).map((w) => [w.confirmed, w.local])).toEqual([
        ['no', 'refused'],
      ])
    } finally {
      store.close()
    }
  }, 180_000)

  it('with pocketsphinx not installed the speaker runs: one info line, no fault', async () => {
    const r = await run({ PATH: pathWithout('pocketsphinx_continuous') })
    const off = r.nocturn.lines.find((l) => l.msg === 'the local wake check is off')
    expect(off?.reason).toMatch(/needs pocketsphinx_continuous/)
    expect(r.nocturn.lines.filter((l) => l.event === 'wake_check_unavailable')).toEqual([])
    // The wake opened a session as before, and its audio went to the model.
    expect(r.sent).toBeGreaterThan(16_000)
    await r.nocturn.waitFor('the status', () => lastStatus()?.wakeCheck?.state === 'off')
    expect(lastStatus()?.wakeCheck?.why).toMatch(/needs pocketsphinx_continuous/)
    expect(lastStatus()?.state).not.toBe('error')
    expect(lastStatus()?.reason).toBeUndefined()
    await r.stop()
  }, 180_000)
})
