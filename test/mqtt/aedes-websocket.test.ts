import { randomBytes } from 'node:crypto'
import mqtt, { type MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { EmbeddedBroker } from '../../src/adapters/aedes/broker.js'
import { silentLogger } from '../../src/core/logger.js'
import { PREFIX, USERS } from '../helpers/brokers.js'
import { until } from '../helpers/wait.js'

/** What a client received, as topic → payload text. */
function inbox(c: MqttClient): string[] {
  const got: string[] = []
  c.on('message', (t, p) => got.push(`${t} ${p.toString()}`))
  return got
}

describe('the embedded broker serves MQTT over WebSocket too (same users, same ACL)', () => {
  let broker: EmbeddedBroker
  const clients: MqttClient[] = []
  const connect = async (url: string, user: { username: string; password: string }) => {
    const c = await mqtt.connectAsync(url, { ...user, reconnectPeriod: 0, connectTimeout: 3000 })
    clients.push(c)
    return c
  }
  beforeAll(async () => {
    broker = new EmbeddedBroker({
      port: 0,
      wsPort: 0,
      prefix: PREFIX,
      logger: silentLogger,
      users: [
        { ...USERS.device, role: 'device' },
        { ...USERS.anna, role: 'phone' },
        { ...USERS.ben, role: 'phone' },
      ],
    })
    await broker.start()
  })
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => {})
    await broker.stop()
  })

  it('a WebSocket phone and a TCP device talk through one broker', async () => {
    expect(broker.wsUrl).toBe(`ws://127.0.0.1:${broker.wsPort}`)
    expect(broker.wsPort).not.toBe(broker.port)
    const device = await connect(broker.url, USERS.device)
    const anna = await connect(broker.wsUrl ?? '', USERS.anna)
    const toAnna = inbox(anna)
    const toDevice = inbox(device)
    await anna.subscribeAsync(`${PREFIX}/kitchen/conversations/reply/anna`)
    await device.subscribeAsync(`${PREFIX}/kitchen/conversations/request/+`)
    await anna.publishAsync(`${PREFIX}/kitchen/conversations/request/anna`, 'ping', { qos: 1 })
    await until(() => toDevice.length === 1, 'the request over TCP')
    expect(toDevice).toEqual([`${PREFIX}/kitchen/conversations/request/anna ping`])
    await device.publishAsync(`${PREFIX}/kitchen/conversations/reply/anna`, 'pong', { qos: 1 })
    await until(() => toAnna.length === 1, 'the reply over WebSocket')
    expect(toAnna).toEqual([`${PREFIX}/kitchen/conversations/reply/anna pong`])
  })

  it('over WebSocket a phone may not read another phone’s replies, nor write its requests', async () => {
    // aedes answers a refused subscription by closing the connection.
    const peeker = await connect(broker.wsUrl ?? '', USERS.anna)
    await expect(
      peeker.subscribeAsync(`${PREFIX}/kitchen/conversations/reply/ben`),
    ).rejects.toThrow()
    const anna = await connect(broker.wsUrl ?? '', USERS.anna)
    const device = await connect(broker.url, USERS.device)
    const toDevice = inbox(device)
    await device.subscribeAsync(`${PREFIX}/kitchen/conversations/request/+`)
    // aedes drops the connection on a refused publish; the device hears nothing.
    const closed = new Promise<void>((r) => anna.once('close', () => r()))
    anna.publish(`${PREFIX}/kitchen/conversations/request/ben`, 'forged', { qos: 1 })
    await closed
    const marker = await connect(broker.url, USERS.device)
    await marker.publishAsync(`${PREFIX}/kitchen/conversations/request/x`, 'after', { qos: 1 })
    await until(() => toDevice.length > 0, 'the marker')
    expect(toDevice).toEqual([`${PREFIX}/kitchen/conversations/request/x after`])
  })

  it('a wrong password over WebSocket is refused', async () => {
    await expect(
      connect(broker.wsUrl ?? '', { username: 'anna', password: randomBytes(8).toString('hex') }),
    ).rejects.toThrow(/Bad username or password|Not authorized/)
  })

  it('the browser handshake: the "mqtt" subprotocol is answered by name', async () => {
    const ws = new WebSocket(broker.wsUrl ?? '', ['mqtt'])
    const protocol = await new Promise<string>((resolve, reject) => {
      ws.once('open', () => resolve(ws.protocol))
      ws.once('error', reject)
    })
    expect(protocol).toBe('mqtt')
    ws.terminate()
  })
})
