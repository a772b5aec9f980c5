import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { Gate } from '../../src/core/gate.js'
import { Grants } from '../../src/core/grants.js'
import type { Tool } from '../../src/core/types.js'
import { pairingUri } from '../../src/protocol/index.js'
import { freePort, mosquittoBroker, PREFIX, USERS } from '../helpers/brokers.js'
import { testDesk, testDeviceMqtt } from '../helpers/device-mqtt.js'
import { NocturnProcess } from '../helpers/nocturn-process.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { captureLogger, unlockDoor } from '../mqtt/fixture.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
/** How long the broker stays away: the outage a household meets when the hub reboots. */
const OUTAGE_MS = 30_000

/**
 * A broker outage mid-approval: Mosquitto stopped for 30 s and started again. The device and
 * `nocturn phone watch` (a real child process) both reconnect by themselves, the watch does not
 * exit meanwhile, and the request the device re-publishes shows up on the watching phone again.
 */
describe.skipIf(skip)('a broker outage: both sides come back by themselves', () => {
  const closers: Array<() => Promise<unknown> | unknown> = []
  afterAll(async () => {
    for (const c of closers.reverse()) await Promise.resolve(c()).catch(() => {})
  })

  it('phone watch survives a 30 s outage and shows the re-published request again', async () => {
    const broker = mosquittoBroker(await freePort())
    await broker.start()
    closers.push(() => broker.stop())
    const deviceId = `dev-${randomUUID().slice(0, 8)}`
    const key = randomBytes(32)
    const logger = captureLogger()
    // Default back-off: the cap under test.
    const device = testDeviceMqtt(broker.url, deviceId, () => new Map([['anna', key]]), { logger })
    closers.push(() => device.close())
    await device.approver.ready()
    const store = new SqliteStore(':memory:')
    closers.push(() => store.close())
    const gate = new Gate({
      policies: {},
      approver: testDesk(device, { logger }),
      grants: new Grants(store),
      clock: realClock(),
      approvalTimeoutMs: 600_000,
    })
    const ac = new AbortController()
    closers.push(() => ac.abort())
    const call = gate.check(
      unlockDoor as Tool,
      { door: 'front' },
      {
        signal: ac.signal,
        channel: 'voice',
        conversationId: 'c1',
        callId: 'call-1',
        gate,
        logger,
        onPending: () => {},
      },
    )
    call.catch(() => {})

    const watch = NocturnProcess.start({
      args: ['phone', 'watch'],
      env: {
        NOCTURN_PHONE_PAIRING: pairingUri({
          broker: broker.url,
          device: deviceId,
          prefix: PREFIX,
          phone: 'anna',
          key,
        }),
        NOCTURN_MQTT_USERNAME: USERS.anna.username,
        NOCTURN_MQTT_PASSWORD: USERS.anna.password,
      },
    })
    closers.push(() => watch.stop('SIGKILL'))
    const shown = () => watch.output.split('\n').filter((l) => l.startsWith('pending ')).length
    await until(() => shown() === 1, `the request on the phone:\n${watch.output}`, 30_000)

    await broker.kill()
    await until(() => !device.connection.connected, 'the device to notice')
    await new Promise((r) => setTimeout(r, OUTAGE_MS))
    expect(watch.child.exitCode).toBeNull()
    await broker.start()
    // The broker came back without its retained messages: the device re-publishes, and the
    // reconnected phone shows the request again.
    await until(() => shown() === 2, `the request again on the phone:\n${watch.output}`, 30_000)
    expect(watch.child.exitCode).toBeNull()
    // Still waiting for an answer: the call has not ended.
    const settled = call.then(
      () => 'approved',
      () => 'failed',
    )
    expect(
      await Promise.race([settled, new Promise((r) => setTimeout(r, 30)).then(() => 'waiting')]),
    ).toBe('waiting')
    // Every wait between tries stayed under the cap (5 s, +25 % jitter).
    const waits = logger.entries
      .filter((e) => e.fields.event === 'mqtt_connection_lost')
      .map((e) => Number(e.fields.retryInMs))
    expect(waits.length).toBeGreaterThan(0)
    expect(Math.max(...waits)).toBeLessThanOrEqual(6250)
    await watch.stop()
  }, 120_000)
})
