import { existsSync, mkdtempSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { renderUnicodeCompact } from 'uqr'
import { describe, expect, it } from 'vitest'
import { pair } from '../../src/app/commands/pair.js'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { parsePairingUri } from '../../src/protocol/index.js'
import { captureIo } from '../helpers/capture-io.js'

const ENV = { NOCTURN_MQTT_URL: 'mqtt://hub.local:1883', NOCTURN_DEVICE_ID: 'kitchen' }

/** The printed link and URI: the last two non-empty lines. */
function printed(out: string): { link: string; uri: string } {
  const lines = out.trim().split('\n').filter(Boolean)
  return { link: lines.at(-2) ?? '', uri: lines.at(-1) ?? '' }
}

describe('nocturn pair: a link to the phone app, the pairing in its fragment', () => {
  it('by default the app on this host name + .local, port 8080; the QR code is that link', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-pair-')), 'phones')
    const r = captureIo(ENV)
    expect(await pair(['anna', "Anna's phone", '--dir', dir], r.io)).toBe(0)
    const { link, uri } = printed(r.text.out)
    expect(link).toBe(`http://${hostname()}.local:8080/#pair=${encodeURIComponent(uri)}`)
    // The fragment is the URI, whole; the key in it is the one stored for anna.
    const fromLink = parsePairingUri(decodeURIComponent(link.split('#pair=')[1] ?? ''))
    expect(fromLink.key).toEqual(new PhoneKeyStore(dir).keys().get('anna'))
    expect(fromLink).toMatchObject({ broker: 'mqtt://hub.local:1883', device: 'kitchen' })
    // Only the fragment holds it: nothing before '#' that a browser sends to a server.
    expect(link.split('#')[0]).toBe(`http://${hostname()}.local:8080/`)
    expect(r.text.out).toContain(renderUnicodeCompact(link, { border: 2 }))
    expect(r.text.out).not.toContain(renderUnicodeCompact(uri, { border: 2 }))
  })

  it('the host name, port and HTTPS from options or the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-pair-'))
    const a = captureIo(ENV)
    const args = ['--app-host', 'kitchen.lan', '--app-port', '8443', '--app-https', '--no-qr']
    expect(await pair(['anna', 'A', '--dir', dir, ...args], a.io)).toBe(0)
    expect(printed(a.text.out).link).toMatch(
      /^https:\/\/kitchen\.lan:8443\/#pair=nocturn-pair%3Av1%3F/,
    )
    expect(a.text.out).not.toMatch(/[▀▄█]/)

    const b = captureIo({ ...ENV, NOCTURN_APP_HOST: '192.168.1.20', NOCTURN_APP_PORT: '80' })
    expect(await pair(['ben', 'B', '--dir', dir, '--no-qr'], b.io)).toBe(0)
    expect(printed(b.text.out).link).toMatch(/^http:\/\/192\.168\.1\.20\/#pair=/)
  })

  it('a bad host name or port is refused before any key is made', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-pair-')), 'phones')
    const host = captureIo(ENV)
    expect(await pair(['anna', 'A', '--dir', dir, '--app-host', 'evil/#x'], host.io)).toBe(2)
    expect(host.text.err).toMatch(/--app-host must be a host name/)
    const port = captureIo(ENV)
    expect(await pair(['anna', 'A', '--dir', dir, '--app-port', '99999'], port.io)).toBe(2)
    expect(port.text.err).toMatch(/--app-port must be a port number/)
    expect(existsSync(dir)).toBe(false)
  })
})
