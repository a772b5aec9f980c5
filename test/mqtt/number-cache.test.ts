import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, mosquittoBroker, type TestBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'

const ROOT = join(import.meta.dirname, '../..')
const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/**
 * mqtt.js's default `writeCache` makes mqtt-packet build a table of 65,536 Buffers (one per 16-bit
 * number, about 7 MB of heap) at the first packet written; our clients turn it off. In a fresh
 * process (the table is shared by every client in one), after connecting and publishing, the table
 * is still empty.
 */
describe.skipIf(skip)('an MQTT connection after it has written packets', () => {
  let broker: TestBroker
  beforeAll(async () => {
    broker = mosquittoBroker(await freePort())
    await broker.start()
  })
  afterAll(async () => {
    await broker?.stop()
  })

  it('leaves mqtt-packet without its 65,536-Buffer number table', () => {
    const script = `
      import { createRequire } from 'node:module'
      import { realClock } from './src/adapters/clock/real-clock.ts'
      import { MqttConnection } from './src/adapters/mqtt/connection.ts'
      import { silentLogger } from './src/core/logger.ts'
      const conn = new MqttConnection({
        url: ${JSON.stringify(broker.url)},
        clientId: 'number-cache',
        username: ${JSON.stringify(USERS.intruder.username)},
        password: ${JSON.stringify(USERS.intruder.password)},
        logger: silentLogger,
        clock: realClock(),
      })
      conn.start()
      await conn.ready()
      await conn.publish('nocturn/v1/number-cache/test', 'x', { qos: 1 })
      // mqtt-packet as mqtt.js resolves it (the copy whose table would be filled).
      const fromMqtt = createRequire(createRequire(import.meta.url).resolve('mqtt'))
      const numbers = fromMqtt('mqtt-packet/numbers.js')
      console.log(JSON.stringify({ cached: Object.keys(numbers.cache).length }))
      await conn.close()
    `
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
    )
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ cached: 0 })
  })
})
