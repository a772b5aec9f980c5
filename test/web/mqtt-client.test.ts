import type { AddressInfo } from 'node:net'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket, { WebSocketServer } from 'ws'
import { MqttClient, type SocketLike } from '../../web/src/mqtt/client.js'
import { PacketReader, publishPacket } from '../../web/src/mqtt/packets.js'
import { freePort, mosquittoBroker, type TestBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../mqtt/fixture.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
// Node 20 has no global WebSocket: the `ws` package stands in for the browser's.
const socket = (url: string) => new WebSocket(url, ['mqtt']) as unknown as SocketLike

function client(url: string, password: string = USERS.device.password, keepalive = 30) {
  return new MqttClient(url, {
    clientId: `t-${Math.random().toString(36).slice(2)}`,
    username: USERS.device.username,
    password,
    keepalive,
    reconnectPeriod: 200,
    connectTimeout: 8000,
    socket,
  })
}
const connected = (c: MqttClient) => new Promise<void>((r) => c.on('connect', r))

describe('packet reader', () => {
  it('joins a packet split across frames and splits packets joined in one', () => {
    const a = publishPacket('a/b', new Uint8Array(20_000).fill(7), 1)
    const b = publishPacket('c', new TextEncoder().encode('hi'), 2)
    const all = new Uint8Array(a.length + b.length)
    all.set(a)
    all.set(b, a.length)
    const r = new PacketReader()
    expect(r.push(all.subarray(0, 2))).toEqual([])
    expect(r.push(all.subarray(2, 5000))).toEqual([])
    const got = r.push(all.subarray(5000))
    expect(got.map((p) => p.type === 'publish' && [p.topic, p.payload.length, p.id])).toEqual([
      ['a/b', 20_000, 1],
      ['c', 2, 2],
    ])
  })
})

describe.skipIf(skip !== undefined)(
  'the web MQTT client against Mosquitto',
  { timeout: 30_000 },
  () => {
    let broker: TestBroker
    let url: string
    beforeAll(async () => {
      broker = mosquittoBroker(await freePort(), { websocketPort: await freePort() })
      await broker.start()
      url = broker.wsUrl ?? ''
    })
    afterAll(() => broker?.stop())

    it('a wrong password is refused with CONNACK 5 as err.code', async () => {
      const c = client(url, 'wrong')
      const code = await new Promise((r) => c.on('error', (e) => r(e.code)))
      c.end()
      expect(code).toBe(5)
    })

    it('subscribes, receives QoS 1, QoS 0 and a large message, publishes on PUBACK', async () => {
      const sub = client(url)
      await connected(sub)
      const got: Array<[string, number]> = []
      sub.on('message', (t, p) => got.push([t, p.byteLength]))
      await new Promise<void>((res, rej) =>
        sub.subscribe(['nocturn/v1/t/#'], (e) => (e ? rej(e) : res())),
      )
      const pub = client(url)
      await connected(pub)
      await new Promise<void>((res, rej) =>
        pub.publish('nocturn/v1/t/1', 'one', (e) => (e ? rej(e) : res())),
      )
      await new Promise<void>((res, rej) =>
        pub.publish('nocturn/v1/t/big', new Uint8Array(40_000), (e) => (e ? rej(e) : res())),
      )
      // QoS 0 from another kind of client: the device's own mqtt.js over TCP.
      const device = await mqtt.connectAsync(broker.url, {
        username: USERS.device.username,
        password: USERS.device.password,
      })
      await device.publishAsync('nocturn/v1/t/0', 'zero!', { qos: 0 })
      await device.endAsync()
      await until(() => got.length >= 3, 'three messages', 5000)
      expect(got).toEqual([
        ['nocturn/v1/t/1', 3],
        ['nocturn/v1/t/big', 40_000],
        ['nocturn/v1/t/0', 5],
      ])
      sub.end()
      pub.end()
    })

    it('reconnects after the broker restarts', async () => {
      const c = client(url)
      await connected(c)
      const offline = new Promise<void>((r) => c.on('offline', r))
      await broker.kill()
      await offline
      const again = connected(c)
      await broker.start()
      await again
      expect(c.connected).toBe(true)
      c.end()
    })

    it('a broker that stops answering PINGREQ is left, and tried again', async () => {
      // A WebSocket peer that accepts the CONNECT, then never answers a ping.
      const peer = new WebSocketServer({ host: '127.0.0.1', port: 0 })
      await new Promise((r) => peer.once('listening', r))
      let connects = 0
      let pings = 0
      peer.on('connection', (ws) =>
        ws.on('message', (data: Buffer) => {
          if (data[0] === 0x10) {
            connects++
            ws.send(Buffer.from([0x20, 0x02, 0x00, 0x00]))
          }
          if (data[0] === 0xc0) pings++
        }),
      )
      const port = (peer.address() as AddressInfo).port
      const c = client(`ws://127.0.0.1:${port}`, USERS.device.password, 1)
      let offline = 0
      c.on('offline', () => offline++)
      await until(() => connects >= 2, 'a second CONNECT after the dead ping', 10_000)
      c.end()
      await new Promise((r) => peer.close(r))
      expect(pings).toBeGreaterThanOrEqual(1)
      expect(offline).toBeGreaterThanOrEqual(1)
      expect(connects).toBe(2)
    })

    it('keeps a 1 s keepalive connection alive past the broker’s 1.5 s limit', async () => {
      const c = client(url, USERS.device.password, 1)
      await connected(c)
      let dropped = false
      c.on('offline', () => {
        dropped = true
      })
      await new Promise((r) => setTimeout(r, 3500))
      expect(dropped).toBe(false)
      expect(c.connected).toBe(true)
      c.end()
    })
  },
)
