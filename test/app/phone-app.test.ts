import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/app/config/errors.js'
import { type LoadedConfig, parseConfig } from '../../src/app/config/load.js'
import type { DeviceDoctorContext } from '../../src/app/doctor/device-context.js'
import { phoneAppCheck } from '../../src/app/doctor/phone-app-check.js'
import { brokerWsUrlFor, phoneAppUrl, startPhoneApp } from '../../src/app/phone-app.js'
import { freePort } from '../helpers/brokers.js'
import { captureLogger } from '../mqtt/fixture.js'

function load(o: Record<string, unknown>): LoadedConfig {
  return parseConfig(JSON.stringify({ store: { path: '/tmp/x.db' }, ...o }), 'test config', {})
}

function ctx(loaded: LoadedConfig): DeviceDoctorContext {
  return { env: {}, loaded, configPath: loaded.path, configError: undefined }
}

describe('phoneApp configuration', () => {
  it('defaults: on, port 8080, the host name + .local in links', () => {
    const c = load({ mqtt: { url: 'mqtt://localhost:1883', deviceId: 'kitchen' } }).config
    expect(c.phoneApp).toEqual({ enabled: true, port: 8080 })
    expect(phoneAppUrl(c)).toBe(`http://${hostname()}.local:8080/`)
    const tls = load({
      mqtt: { url: 'mqtt://hub:1883' },
      phoneApp: { port: 443, publicHost: 'kitchen.lan', tlsCertFile: '/c', tlsKeyFile: '/k' },
    }).config
    expect(phoneAppUrl(tls)).toBe('https://kitchen.lan/')
  })

  it('a certificate without its key, or a bad URL, is refused with a message naming it', () => {
    expect(() => load({ phoneApp: { tlsCertFile: '/etc/nocturn/cert.pem' } })).toThrow(ConfigError)
    expect(() => load({ phoneApp: { tlsCertFile: '/etc/nocturn/cert.pem' } })).toThrow(
      /tlsCertFile and tlsKeyFile go together/,
    )
    expect(() => load({ phoneApp: { brokerWsUrl: 'http://hub:9001' } })).toThrow(
      /phoneApp\.brokerWsUrl: expected ws:\/\/ or wss:\/\//,
    )
  })

  it('the broker WebSocket URL: configured, else the mqtt host on 9001, the page host when the broker is local', () => {
    const at = (mqtt: string, phoneApp: Record<string, unknown> = {}) =>
      load({ mqtt: { url: mqtt }, phoneApp }).config
    expect(brokerWsUrlFor(at('mqtt://hub.local:1883'), 'kitchen.local')).toBe('ws://hub.local:9001')
    expect(brokerWsUrlFor(at('mqtt://127.0.0.1:1883'), 'kitchen.local')).toBe(
      'ws://kitchen.local:9001',
    )
    expect(brokerWsUrlFor(at('mqtt://localhost', { publicHost: 'pi.lan' }), undefined)).toBe(
      'ws://pi.lan:9001',
    )
    expect(brokerWsUrlFor(at('mqtts://hub.local:8883'), 'x')).toBe('wss://hub.local:9001')
    expect(
      brokerWsUrlFor(at('mqtt://hub.local', { tlsCertFile: '/c', tlsKeyFile: '/k' }), 'x'),
    ).toBe('wss://hub.local:9001')
    expect(brokerWsUrlFor(at('mqtt://hub', { brokerWsUrl: 'wss://hub:443/mqtt' }), 'x')).toBe(
      'wss://hub:443/mqtt',
    )
  })
})

describe('serving the app from the appliance, and doctor', () => {
  let dir: string
  let blocker: Server
  let blocked: number
  const sockets: Socket[] = []
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-app-'))
    mkdirSync(join(dir, 'web'))
    writeFileSync(join(dir, 'web', 'index.html'), '<!doctype html>\n')
    blocked = await freePort()
    // Another program on the port: it accepts connections and never answers.
    blocker = createServer((socket) => sockets.push(socket))
    await new Promise<void>((r) => blocker.listen(blocked, '127.0.0.1', () => r()))
  })
  afterAll(async () => {
    for (const s of sockets) s.destroy()
    await new Promise((r) => blocker.close(r))
    rmSync(dir, { recursive: true, force: true })
  })

  it('/config.json names the device and prefix; doctor sees it served', async () => {
    const port = await freePort()
    const loaded = load({
      mqtt: { url: 'mqtt://127.0.0.1:1883', deviceId: 'kitchen', prefix: 'home/nocturn' },
      phoneApp: { port, host: '127.0.0.1', root: join(dir, 'web'), publicHost: 'kitchen.local' },
    })
    const free = await phoneAppCheck.run(ctx(loaded))
    expect(free).toMatchObject({ status: 'ok', summary: expect.stringMatching(/is free/) })
    const server = await startPhoneApp(loaded.config, captureLogger())
    try {
      expect(server?.port).toBe(port)
      const r = await fetch(`http://127.0.0.1:${port}/config.json`)
      expect(await r.json()).toEqual({
        brokerWsUrl: 'ws://127.0.0.1:9001',
        device: 'kitchen',
        prefix: 'home/nocturn',
      })
      const served = await phoneAppCheck.run(ctx(loaded))
      expect(served).toMatchObject({
        status: 'ok',
        summary: `served on port ${port}: phones open http://kitchen.local:${port}/`,
      })
    } finally {
      await server?.close()
    }
  })

  it('a port taken by another program: the speaker still starts, the error is logged, doctor fails it', async () => {
    const loaded = load({
      mqtt: { url: 'mqtt://127.0.0.1:1883' },
      phoneApp: { port: blocked, host: '127.0.0.1', root: join(dir, 'web') },
    })
    const logger = captureLogger()
    const told: string[] = []
    expect(
      await startPhoneApp(loaded.config, logger, { onNotServed: (r) => told.push(r) }),
    ).toBeUndefined()
    // What the LED's fault and the status carry: the fix, and what holds the port (this process).
    expect(told).toEqual([
      expect.stringMatching(
        new RegExp(
          `^the phone app is not served: port ${blocked} is taken by .* \\(pid ${process.pid}\\) — set phoneApp\\.port to a free port`,
        ),
      ),
    ])
    expect(logger.entries).toContainEqual(
      expect.objectContaining({
        level: 'error',
        fields: expect.objectContaining({
          event: 'phone_app_not_served',
          port: blocked,
          code: 'EADDRINUSE',
        }),
      }),
    )
    const r = await phoneAppCheck.run(ctx(loaded))
    expect(r).toMatchObject({
      status: 'fail',
      summary: expect.stringMatching(
        new RegExp(`^port ${blocked} is taken by .* \\(pid ${process.pid}\\)$`),
      ),
      details: [expect.stringMatching(/^fix: set phoneApp\.port to a free port, or stop /)],
    })
  })

  it('off, or without a broker: not served, and doctor says why', async () => {
    const off = load({ mqtt: { url: 'mqtt://hub' }, phoneApp: { enabled: false } })
    expect(await startPhoneApp(off.config, captureLogger())).toBeUndefined()
    expect(await phoneAppCheck.run(ctx(off))).toMatchObject({ status: 'skip' })
    const none = load({})
    expect(await startPhoneApp(none.config, captureLogger())).toBeUndefined()
    expect(await phoneAppCheck.run(ctx(none))).toMatchObject({
      status: 'skip',
      summary: expect.stringMatching(/no broker/),
    })
  })
})
