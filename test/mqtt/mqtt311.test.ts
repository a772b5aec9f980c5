import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { aedesBroker, freePort, USERS } from '../helpers/brokers.js'
import { until } from '../helpers/wait.js'
import { captureLogger } from './fixture.js'

// The embedded broker (aedes) speaks only 3.1.1: what `npm start` and the phone demo run on.
describe('a broker that refuses MQTT 5', () => {
  const stops: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop()
  })

  it('is asked again in 3.1.1 with one information line and no warning; a real loss still warns', async () => {
    const broker = aedesBroker(await freePort())
    await broker.start()
    stops.push(() => broker.kill())
    const logger = captureLogger()
    const conn = new MqttConnection({
      url: broker.url,
      clientId: 'nocturn-kitchen',
      ...USERS.device,
      logger,
      clock: realClock(),
    })
    stops.push(() => conn.close())
    conn.start()
    await conn.ready()
    expect(conn.protocolVersion).toBe(4)
    expect(logger.entries.map((e) => [e.level, e.fields.event])).toEqual([
      ['info', 'mqtt5_refused'],
      ['info', undefined],
    ])
    expect(logger.entries[1]?.msg).toBe('mqtt connected')

    await broker.kill()
    await until(
      () => logger.entries.some((e) => e.fields.event === 'mqtt_connection_lost'),
      'the loss to be said',
    )
    const lost = logger.entries.find((e) => e.fields.event === 'mqtt_connection_lost')
    expect(lost?.level).toBe('warn')
    // Said once: the version stays 3.1.1 for every later try.
    expect(logger.entries.filter((e) => e.fields.event === 'mqtt5_refused')).toHaveLength(1)
  })
})
