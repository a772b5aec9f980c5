import type { AddressInfo } from 'node:net'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket, { WebSocketServer } from 'ws'
import { MAX_PAYLOAD_BYTES } from '../../src/protocol/limits.js'
import { parseJsonObject } from '../../src/protocol/phone-side.js'
import { MqttClient, type SocketLike } from '../../web/src/mqtt/client.js'
import { type Incoming, PacketReader, publishPacket } from '../../web/src/mqtt/packets.js'
import { freePort, mosquittoBroker, type TestBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

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
    const a = publishPacket('a/b', new Uint8Array(12_000).fill(7), 1)
    const b = publishPacket('c', new TextEncoder().encode('hi'), 2)
    const all = new Uint8Array(a.length + b.length)
    all.set(a)
    all.set(b, a.length)
    const r = new PacketReader()
    expect(r.push(all.subarray(0, 2))).toEqual([])
    expect(r.push(all.subarray(2, 5000))).toEqual([])
    const got = r.push(all.subarray(5000))
    expect(got.map((p) => p.type === 'publish' && [p.topic, p.payload.length, p.id])).toEqual([
      ['a/b', 12_000, 1],
      ['c', 2, 2],
    ])
  })

  it('holds no more of an oversized packet than one byte past the protocol limit, and reads on after it', () => {
    const big = publishPacket('a/big', new Uint8Array(1_000_000).fill(9), 7)
    const next = publishPacket('a/next', new TextEncoder().encode('ok'), 8)
    const r = new PacketReader()
    const got: Incoming[] = []
    // In 16 KiB frames, the last also carrying the next packet, as a WebSocket may deliver them.
    for (let at = 0; at < big.length; at += 16_384) {
      const frame = big.subarray(at, Math.min(at + 16_384, big.length))
      if (at + 16_384 >= big.length) got.push(...r.push(Buffer.concat([frame, next])))
      else got.push(...r.push(frame))
    }
    expect(got.map((p) => p.type === 'publish' && [p.topic, p.id])).toEqual([
      ['a/big', 7],
      ['a/next', 8],
    ])
    const kept = got[0]?.type === 'publish' ? got[0].payload.length : 0
    // Still too large for the protocol, so the phone side refuses it as oversized; never 1 MB.
    expect(kept).toBeGreaterThan(MAX_PAYLOAD_BYTES)
    expect(kept).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES + 1025)
    expect(
      parseJsonObject(got[0]?.type === 'publish' ? got[0].payload : new Uint8Array()),
    ).toMatchObject({ ok: false, reason: 'oversized' })
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
      // Larger than any protocol payload: delivered cut, still too large (refused where checked).
      const cut = got[1]?.[1] ?? 0
      expect(cut).toBeGreaterThan(MAX_PAYLOAD_BYTES)
      expect(cut).toBeLessThan(40_000)
      expect(got).toEqual([
        ['nocturn/v1/t/1', 3],
        ['nocturn/v1/t/big', cut],
        ['nocturn/v1/t/0', 5],
      ])
      sub.end()
      pub.end()
    })

    it('acknowledges oversized QoS 1 messages it cut, so the broker keeps sending', async () => {
      const sub = client(url)
      await connected(sub)
      const got: string[] = []
      const sizes: number[] = []
      sub.on('message', (t, p) => {
        got.push(t)
        sizes.push(p.byteLength)
      })
      await new Promise<void>((res, rej) =>
        sub.subscribe(['nocturn/v1/flood/#'], (e) => (e ? rej(e) : res())),
      )
      // More than Mosquitto's 20 unacknowledged messages in flight: without PUBACKs it would stop.
      // 20 kB each (over the protocol's 16 kB, so each is cut): Mosquitto 2.0's WebSocket listener
      // sends larger ones so slowly (libwebsockets, a few kB per service call) that a burst of
      // 100 kB messages takes minutes, whichever client reads them.
      const device = await mqtt.connectAsync(broker.url, {
        username: USERS.device.username,
        password: USERS.device.password,
      })
      for (let i = 0; i < 25; i++) {
        await device.publishAsync(`nocturn/v1/flood/${i}`, Buffer.alloc(20_000, 1), { qos: 1 })
      }
      await device.publishAsync('nocturn/v1/flood/last', 'small', { qos: 1 })
      await device.endAsync()
      await until(
        () => got.includes('nocturn/v1/flood/last'),
        'the small message after 25 large ones',
        10_000,
      )
      expect(got).toHaveLength(26)
      expect(sizes.slice(0, 25).every((n) => n > MAX_PAYLOAD_BYTES && n < 20_000)).toBe(true)
      expect(sub.connected).toBe(true)
      sub.end()
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
