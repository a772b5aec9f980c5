import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, mosquittoBroker, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/** The WebSocket listener a phone app in a browser uses: same users, same ACL as TCP. */
describe.skipIf(skip)('Mosquitto WebSocket listener', () => {
  let broker: TestBroker

  beforeAll(async () => {
    broker = mosquittoBroker(await freePort(), { websocketPort: await freePort() })
    await broker.start()
  })
  afterAll(async () => {
    await broker?.stop()
  })

  it('carries a message from the TCP listener to a client on WebSocket, under the ACL', async () => {
    expect(broker.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/)
    const phone = await mqtt.connectAsync(broker.wsUrl as string, {
      ...USERS.anna,
      clientId: 'ws-anna',
      reconnectPeriod: 0,
    })
    const device = await mqtt.connectAsync(broker.url, {
      ...USERS.device,
      clientId: 'tcp-device',
      reconnectPeriod: 0,
    })
    try {
      const topic = `${PREFIX}/kitchen/status`
      await phone.subscribeAsync(topic, { qos: 1 })
      const got = new Promise<string>((resolve) =>
        phone.once('message', (_t, payload) => resolve(payload.toString())),
      )
      await device.publishAsync(topic, '{"v":1}', { qos: 1 })
      expect(await got).toBe('{"v":1}')
      // The phone's user reads its own replies and never another phone's, over WebSocket too.
      const reply = (p: string) => `${PREFIX}/kitchen/conversations/reply/${p}`
      await phone.subscribeAsync([reply('ben'), reply('anna')], { qos: 1 })
      const seen: string[] = []
      const annas = new Promise<void>((resolve) =>
        phone.on('message', (t) => {
          seen.push(t)
          if (t === reply('anna')) resolve()
        }),
      )
      await device.publishAsync(reply('ben'), 'for ben', { qos: 1 })
      await device.publishAsync(reply('anna'), 'for anna', { qos: 1 })
      await annas
      expect(seen).toEqual([reply('anna')])
    } finally {
      await phone.endAsync()
      await device.endAsync()
    }
  })

  it('refuses a wrong password on WebSocket too', async () => {
    await expect(
      mqtt.connectAsync(broker.wsUrl as string, {
        username: USERS.anna.username,
        password: 'wrong',
        clientId: 'ws-wrong',
        reconnectPeriod: 0,
      }),
    ).rejects.toThrow()
  })
})
