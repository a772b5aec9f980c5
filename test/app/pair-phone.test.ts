import { mkdtempSync, readdirSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { createDeviceMqtt } from '../../src/adapters/mqtt/index.js'
import { pair } from '../../src/app/commands/pair.js'
import { phone } from '../../src/app/commands/phone.js'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { silentLogger } from '../../src/core/logger.js'
import { parsePairingUri } from '../../src/protocol/index.js'
import { aedesBroker, freePort, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { captureIo } from '../helpers/capture-io.js'
import { testDesk } from '../helpers/device-mqtt.js'

describe('nocturn pair', () => {
  it('creates an owner-only key, shows it once as a URI and QR, lists without keys, revokes', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-pair-')), 'phones')
    const env = { NOCTURN_MQTT_URL: 'mqtt://hub.local:1883', NOCTURN_DEVICE_ID: 'kitchen' }
    const a = captureIo(env)
    expect(await pair(['anna', "Anna's phone", '--dir', dir], a.io)).toBe(0)
    const uri = a.text.out.trim().split('\n').at(-1) ?? ''
    const p = parsePairingUri(uri)
    expect(p).toMatchObject({
      broker: 'mqtt://hub.local:1883',
      device: 'kitchen',
      prefix: PREFIX,
      phone: 'anna',
    })
    expect(a.text.out).toMatch(/[▀▄█]/) // the QR code
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'anna.json')).mode & 0o777).toBe(0o600)
    expect(new PhoneKeyStore(dir).keys().get('anna')).toEqual(p.key)

    const again = captureIo(env)
    expect(await pair(['anna', 'again', '--dir', dir], again.io)).toBe(1)
    expect(again.text.err).toMatch(/already paired/)

    const list = captureIo()
    expect(await pair(['--list', '--dir', dir], list.io)).toBe(0)
    expect(list.text.out).toContain("anna\tAnna's phone")
    expect(list.text.out).not.toContain(p.key.toString('base64url'))

    expect(await pair(['--revoke', 'anna', '--dir', dir], captureIo().io)).toBe(0)
    expect(readdirSync(dir)).toEqual([])
    expect(new PhoneKeyStore(dir).keys().size).toBe(0)
    expect(await pair(['--revoke', 'anna', '--dir', dir], captureIo().io)).toBe(1)
  })

  it('refuses a broker URL with a password in it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-pair-'))
    const r = captureIo({ NOCTURN_DEVICE_ID: 'kitchen' })
    expect(
      await pair(['anna', 'A', '--dir', dir, '--broker', 'mqtt://u:secret@hub:1883'], r.io),
    ).toBe(2)
  })
})

describe('nocturn phone with no broker there', () => {
  it('says which broker it could not reach (host and port only), after 10 s', async () => {
    const port = await freePort()
    const pairing = `nocturn-pair:v1?broker=${encodeURIComponent(`mqtt://who:hunter2@127.0.0.1:${port}`)}&device=hall&prefix=${encodeURIComponent(PREFIX)}&phone=anna&key=${Buffer.alloc(32, 7).toString('base64url')}`
    const r = captureIo({ NOCTURN_PHONE_PAIRING: pairing })
    expect(await phone(['watch', '--once'], r.io)).toBe(1)
    expect(r.text.err).toContain(
      `cannot reach the broker at mqtt://127.0.0.1:${port} within 10 s: is it running`,
    )
    expect(r.text.err).not.toContain('hunter2')
  }, 20_000)
})

describe('nocturn phone (against the embedded broker and a real device)', () => {
  let broker: TestBroker
  beforeAll(async () => {
    broker = aedesBroker(await freePort())
    await broker.start()
  })
  afterAll(async () => {
    await broker.stop()
  })

  it('pairs, watches, approves with a grant and denies; secrets only from env', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-phones-'))
    const p = captureIo({ NOCTURN_MQTT_URL: broker.url, NOCTURN_DEVICE_ID: 'hall' })
    expect(await pair(['anna', 'Anna', '--dir', dir, '--no-qr'], p.io)).toBe(0)
    const uri = p.text.out.trim().split('\n').at(-1) ?? ''
    const store = new PhoneKeyStore(dir)
    const device = createDeviceMqtt({
      url: broker.url,
      deviceId: 'hall',
      ...USERS.device,
      phones: () => store.keys(),
      logger: silentLogger,
      clock: realClock(),
    })
    await device.approver.ready()
    const desk = testDesk(device)
    const env = {
      NOCTURN_PHONE_PAIRING: uri,
      NOCTURN_MQTT_USERNAME: USERS.phone.username,
      NOCTURN_MQTT_PASSWORD: USERS.phone.password,
    }
    const now = Date.now()
    const ask = (id: string) =>
      desk.request(
        {
          id,
          tool: 'set_light',
          action: 'dim the hall light to 40%',
          args: { room: 'hall', level: 40 },
          argsDigest: 'x',
          channel: 'voice',
          conversationId: 'c1',
          critical: false,
          said: 'Make the hall\ncosier,   please',
          createdAt: now,
          expiresAt: now + 60_000,
        },
        new AbortController().signal,
      )
    try {
      const first = ask('req-1')
      const w = captureIo(env)
      expect(await phone(['watch', '--once'], w.io)).toBe(0)
      expect(w.text.out).toContain('pending  req-1  dim the hall light to 40%')
      // What was said travels signed with the request, its whitespace made one space.
      expect(w.text.out).toContain('said in the room: "Make the hall cosier, please"')

      const a = captureIo(env)
      expect(await phone(['approve', 'req-1', '--grant', '2h'], a.io)).toBe(0)
      expect(a.text.out).toContain('req-1: approved by anna')
      const d = await first
      expect(d).toMatchObject({ decision: 'approve', by: 'anna' })
      expect(typeof d.grant === 'object' && d.grant.until > now).toBe(true)

      const second = ask('req-2')
      second.catch(() => {})
      expect(await phone(['deny', 'req-2'], captureIo(env).io)).toBe(0)
      await expect(second).resolves.toMatchObject({ decision: 'deny' })

      const gone = captureIo(env)
      expect(await phone(['approve', 'req-2'], gone.io)).toBe(1)
      expect(gone.text.err).toMatch(/no verified request/)
    } finally {
      await device.close()
    }
  })
})
