import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { composeAlerts } from '../../src/app/compose/alerts.js'
import { Closers } from '../../src/app/compose/composition.js'
import { parseConfig } from '../../src/app/config/load.js'
import { NocturnError } from '../../src/core/errors.js'
import { silentLogger } from '../../src/core/logger.js'
import type { Publisher } from '../../src/ports/publisher.js'
import {
  freePort,
  homeAssistantAcl,
  mosquittoBroker,
  PREFIX,
  type TestBroker,
  USERS,
} from '../helpers/brokers.js'
import { testDesk, testDeviceMqtt } from '../helpers/device-mqtt.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { doorApproval } from './door-approval.js'

interface NtfyPost {
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** An ntfy server on loopback: records each publish. */
async function ntfyReceiver(): Promise<{ server: Server; origin: string; posts: NtfyPost[] }> {
  const posts: NtfyPost[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      posts.push({
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"id":"x"}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return { server, origin: `http://127.0.0.1:${port}`, posts }
}

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

describe.skipIf(skip !== undefined)(
  'alert channels without authority: ntfy and Home Assistant',
  () => {
    let broker: TestBroker
    let ntfy: Awaited<ReturnType<typeof ntfyReceiver>>
    beforeAll(async () => {
      broker = mosquittoBroker(await freePort(), { extraAcl: [homeAssistantAcl()] })
      await broker.start()
      ntfy = await ntfyReceiver()
    })
    afterAll(async () => {
      await broker?.stop()
      ntfy?.server.close()
    })

    it('a request is alerted with its sentence and a link to its card, and no key, MAC, digest or decision', async () => {
      const deviceId = `dev-${randomUUID().slice(0, 8)}`
      const key = randomBytes(32)
      const keys = new Map([['anna', key]])
      const dir = mkdtempSync(join(tmpdir(), 'nocturn-alerts-'))
      const { config } = parseConfig(
        JSON.stringify({
          mqtt: { url: broker.url, deviceId, prefix: PREFIX },
          phonesDir: join(dir, 'phones'),
          phoneApp: {
            publicHost: 'kitchen.local',
            port: 8443,
            tlsCertFile: '/c',
            tlsKeyFile: '/k',
          },
          alerts: {
            ntfy: { server: ntfy.origin, topic: 'house-7Qx9', token: 'tk_secret_token_1' },
            homeAssistant: true,
          },
        }),
        '/test/config.json',
      )
      const closers = new Closers(silentLogger)
      const store = new SqliteStore(':memory:')
      let publisher: Publisher | undefined
      const alerts = composeAlerts(
        { config, clock: realClock(), log: silentLogger, closers },
        { subscriptions: store.push, phones: () => keys, publisher: () => publisher },
      )
      expect(alerts.broadcast).toBeDefined()
      const device = testDeviceMqtt(broker.url, deviceId, () => keys)
      const desk = testDesk(device, { ...(alerts.broadcast && { broadcast: alerts.broadcast }) })
      publisher = device.connection
      await device.approver.ready()
      const ha = await mqtt.connectAsync(broker.url, { ...USERS.homeAssistant, reconnectPeriod: 0 })
      const haAlerts: Record<string, unknown>[] = []
      const haRaw: string[] = []
      ha.on('message', (_t, p) => {
        haRaw.push(p.toString('utf8'))
        haAlerts.push(JSON.parse(p.toString('utf8')))
      })
      await ha.subscribeAsync(`${PREFIX}/${deviceId}/home-assistant/alert`, { qos: 1 })
      try {
        const request = doorApproval()
        const { id } = request
        const controller = new AbortController()
        const decision = desk.request(request, controller.signal)
        decision.catch(() => {})
        await until(() => ntfy.posts.length >= 1 && haAlerts.length >= 1)
        const card = `https://kitchen.local:8443/#card=${id}&device=${deviceId}`

        const post = ntfy.posts[0] as NtfyPost
        expect(post.url).toBe('/house-7Qx9')
        expect(post.headers.click).toBe(card)
        expect(post.headers.title).toBe(`${deviceId} asks for a yes`)
        expect(post.headers.tags).toBe('lock,warning')
        expect(post.headers.priority).toBe('high')
        expect(post.headers.authorization).toBe('Bearer tk_secret_token_1')
        expect(post.body).toContain('unlock the front door')

        expect(haAlerts[0]).toEqual({
          kind: 'request',
          id,
          device: deviceId,
          title: `${deviceId} asks`,
          message: 'unlock the front door',
          tool: 'unlock_door',
          critical: true,
          expires_at: request.expiresAt,
          url: card,
        })

        controller.abort(new NocturnError('NOC_ERR_CANCELLED', 'withdrawn'))
        await until(() => haAlerts.length >= 2)
        expect(haAlerts[1]).toEqual({
          kind: 'ended',
          id,
          device: deviceId,
          state: 'withdrawn',
          url: card,
        })
        // ntfy has nothing to close: only the request was sent.
        expect(ntfy.posts).toHaveLength(1)

        // No authority anywhere: not the phone's key in any form, no MAC, no digest, no decision.
        const everything = [post.body, JSON.stringify(post.headers), ...haRaw].join('\n')
        for (const form of [
          key.toString('hex'),
          key.toString('base64url'),
          key.toString('base64'),
        ]) {
          expect(everything).not.toContain(form)
        }
        for (const field of ['mac', 'macs', 'digest', 'decision', 'nonce']) {
          for (const a of haAlerts) expect(a).not.toHaveProperty(field)
        }
        expect(everything).not.toMatch(/[0-9a-f]{64}/)
      } finally {
        await ha.endAsync(true)
        await device.close()
        await closers.close()
        store.close()
      }
    })
  },
)
