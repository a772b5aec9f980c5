import { afterAll, describe, expect, it } from 'vitest'
import { realClock } from '../../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../../src/adapters/mqtt/connection.js'
import { silentLogger } from '../../../src/core/logger.js'
import { MemoryLogger } from '../../../src/testing/memory-logger.js'
import { freePort, mosquittoBroker, PREFIX, type TestBroker, USERS } from '../../helpers/brokers.js'
import { missingCommands } from '../../helpers/system.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

describe.skipIf(skip)('an MQTT connection closing while messages arrive (real Mosquitto)', () => {
  let broker: TestBroker | undefined
  const open: MqttConnection[] = []
  afterAll(async () => {
    for (const c of open) await c.close({ force: true })
    await broker?.stop()
  })

  function connection(url: string, clientId: string, logger = silentLogger): MqttConnection {
    const c = new MqttConnection({
      url,
      clientId,
      ...USERS.intruder,
      logger,
      clock: realClock(),
    })
    open.push(c)
    return c
  }

  // At every shutdown with traffic on the broker (the phone demo's Ctrl-C, systemctl stop) the
  // PUBACK of a message still being read was written after the stream ended: an error line.
  it('writes nothing after it ends: no error line, however many QoS 1 messages were in flight', async () => {
    broker = mosquittoBroker(await freePort())
    await broker.start()
    const topic = `${PREFIX}/close-test`
    const log = new MemoryLogger()
    const listener = connection(broker.url, 'closing-listener', log)
    let received = 0
    listener.onMessage(() => {
      received++
    })
    listener.start()
    await listener.ready()
    await listener.subscribe([topic])
    const sender = connection(broker.url, 'flooder')
    sender.start()
    await sender.ready()
    const payload = 'x'.repeat(2048)
    const sent = Array.from({ length: 3000 }, () => sender.publish(topic, payload, { qos: 1 }))
    // Close in the middle of the flood: some messages read, more still arriving.
    while (received < 200) await new Promise((r) => setTimeout(r, 1))
    await listener.close()
    await Promise.allSettled(sent)
    await new Promise((r) => setTimeout(r, 200))
    process.stdout.write(`received ${received} of 3000 before the close\n`)
    expect(received).toBeLessThan(3000)
    expect(log.records.filter((r) => r.level === 'warn' || r.level === 'error')).toEqual([])
  }, 30_000)
})
