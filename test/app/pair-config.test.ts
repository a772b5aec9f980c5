import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pair } from '../../src/app/commands/pair.js'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { parsePairingUri } from '../../src/protocol/index.js'
import { captureIo } from '../helpers/capture-io.js'

/** A speaker's configuration in a fresh folder; its secrets name files nobody can read. */
function speaker(extra: Record<string, unknown> = {}): {
  dir: string
  file: string
  phones: string
} {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-pair-config-'))
  const phones = join(dir, 'lib', 'phones')
  const file = join(dir, 'config.json')
  const config = {
    provider: { apiKeyFile: '/nonexistent/gemini-api-key' },
    mqtt: {
      url: 'mqtts://hub.home.arpa:8883',
      deviceId: 'kitchen',
      prefix: 'home/nocturn',
      username: 'kitchen',
      passwordFile: '/nonexistent/mqtt-password',
    },
    phonesDir: phones,
    phoneApp: {
      publicHost: 'kitchen.home.arpa',
      port: 8443,
      tlsCertFile: join(dir, 'tls', 'device.crt'),
      tlsKeyFile: join(dir, 'tls', 'device.key'),
    },
    ...extra,
  }
  writeFileSync(file, `// the speaker's\n${JSON.stringify(config, null, 2)}\n`)
  return { dir, file, phones }
}

/** The printed link and URI: the last two non-empty lines. */
function printed(out: string): { link: string; uri: string } {
  const lines = out.trim().split('\n').filter(Boolean)
  return { link: lines.at(-2) ?? '', uri: lines.at(-1) ?? '' }
}

describe("nocturn pair reads the speaker's configuration", () => {
  it('through $NOCTURN_CONFIG: the key goes to its phonesDir, the pairing carries its broker and device, the link its phone app', async () => {
    const s = speaker()
    const r = captureIo({ NOCTURN_CONFIG: s.file })
    expect(await pair(['anna', "Anna's phone", '--no-qr'], r.io)).toBe(0)
    expect(r.text.err).toBe('')
    expect(readdirSync(s.phones)).toEqual(['anna.json'])
    const { link, uri } = printed(r.text.out)
    const p = parsePairingUri(uri)
    expect(p).toMatchObject({
      broker: 'mqtts://hub.home.arpa:8883',
      device: 'kitchen',
      prefix: 'home/nocturn',
      phone: 'anna',
    })
    // The key the speaker will look up is the one the phone was given.
    expect(new PhoneKeyStore(s.phones).keys().get('anna')).toEqual(p.key)
    expect(link).toBe(`https://kitchen.home.arpa:8443/#pair=${encodeURIComponent(uri)}`)
    expect(r.text.out).toContain(`its key is kept in ${s.phones}`)

    // --list and --revoke read the same folder.
    const list = captureIo({ NOCTURN_CONFIG: s.file })
    expect(await pair(['--list'], list.io)).toBe(0)
    expect(list.text.out).toContain("anna\tAnna's phone")
    expect(await pair(['--revoke', 'anna'], captureIo({ NOCTURN_CONFIG: s.file }).io)).toBe(0)
    expect(readdirSync(s.phones)).toEqual([])
  })

  it('through --config, which wins over $NOCTURN_CONFIG', async () => {
    const s = speaker()
    const r = captureIo({ NOCTURN_CONFIG: '/nonexistent/config.json' })
    expect(await pair(['ben', 'Ben', '--config', s.file, '--no-qr'], r.io)).toBe(0)
    expect(readdirSync(s.phones)).toEqual(['ben.json'])
    expect(parsePairingUri(printed(r.text.out).uri).device).toBe('kitchen')
  })

  it('options and the environment override the configuration', async () => {
    const s = speaker()
    const elsewhere = join(s.dir, 'elsewhere')
    const r = captureIo({ NOCTURN_CONFIG: s.file, NOCTURN_APP_PORT: '9443' })
    const flags = ['--broker', 'mqtt://other.lan:1883', '--device', 'hall', '--prefix', 'x/y']
    const more = ['--dir', elsewhere, '--app-host', 'hall.lan', '--no-qr']
    expect(await pair(['anna', 'A', ...flags, ...more], r.io)).toBe(0)
    const { link, uri } = printed(r.text.out)
    expect(parsePairingUri(uri)).toMatchObject({
      broker: 'mqtt://other.lan:1883',
      device: 'hall',
      prefix: 'x/y',
    })
    expect(link).toMatch(/^https:\/\/hall\.lan:9443\/#pair=/)
    expect(readdirSync(elsewhere)).toEqual(['anna.json'])
    expect(existsSync(s.phones)).toBe(false)
    // A folder the speaker does not read is said, not silently used.
    expect(r.text.err).toContain(`the speaker (${s.file}) reads phone keys from ${s.phones}`)
  })

  it('a configuration without a broker, or with one a pairing cannot carry, names the key to fix; no key is made', async () => {
    const none = speaker({ mqtt: undefined })
    const a = captureIo({ NOCTURN_CONFIG: none.file })
    expect(await pair(['anna', 'A', '--no-qr'], a.io)).toBe(2)
    expect(a.text.err).toContain(`no broker: ${none.file} has no mqtt section — add mqtt.url`)
    expect(a.text.err).toContain('--broker')
    expect(existsSync(none.phones)).toBe(false)

    const ws = speaker({ mqtt: { url: 'ws://hub.lan:9001', deviceId: 'kitchen' } })
    const b = captureIo({ NOCTURN_CONFIG: ws.file })
    expect(await pair(['anna', 'A', '--no-qr'], b.io)).toBe(2)
    expect(b.text.err).toContain(`mqtt.url in ${ws.file} must be mqtt://host:port or mqtts://`)
    expect(existsSync(ws.phones)).toBe(false)
  })

  it('a configuration named but missing is an error, not the development defaults', async () => {
    const r = captureIo({ NOCTURN_MQTT_URL: 'mqtt://hub:1883', NOCTURN_DEVICE_ID: 'k' })
    expect(await pair(['anna', 'A', '--config', '/nonexistent/config.json'], r.io)).toBe(2)
    expect(r.text.err).toContain('/nonexistent/config.json does not exist')
  })

  it.skipIf(existsSync('/etc/nocturn/config.json'))(
    'without any configuration the message says where one is looked for',
    async () => {
      const r = captureIo({})
      expect(await pair(['anna', 'A', '--dir', mkdtempSync(join(tmpdir(), 'p-'))], r.io)).toBe(2)
      expect(r.text.err).toMatch(/no broker: pass --broker .* or --config <path>/)
      expect(r.text.err).toContain('/etc/nocturn/config.json')
    },
  )
})
