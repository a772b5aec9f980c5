import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { runPhoneDemo } from '../../src/app/phone-demo.js'
import { silentLogger } from '../../src/core/logger.js'
import { PhoneClient } from '../../src/phone/client.js'
import { parsePairingUri } from '../../src/protocol/index.js'
import { testPhoneLink } from '../helpers/device-mqtt.js'

/**
 * The demo, with a phone (the reference client, over the broker's WebSocket) in the browser's place:
 * it answers the requests with `decisions` in turn, and stops the demo (Ctrl-C) once the demo has
 * asked again after the last of them.
 */
async function demo(decisions: Array<'approve' | 'deny'>) {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-phone-demo-'))
  const web = join(dir, 'web')
  const { mkdirSync } = await import('node:fs')
  mkdirSync(web)
  writeFileSync(join(web, 'index.html'), '<!doctype html><title>app</title>\n')
  const out = new PassThrough()
  let text = ''
  out.on('data', (d: Buffer) => {
    text += d.toString()
    if (process.env.DEMO_DEBUG) process.stderr.write(d)
  })
  let phone: PhoneClient | undefined
  const stop = new AbortController()
  try {
    const code = await runPhoneDemo({
      signal: stop.signal,
      out,
      logger: silentLogger,
      workDir: join(dir, 'work'),
      appPort: 0,
      brokerWsPort: 0,
      appRoot: web,
      onLink: (link) => {
        void (async () => {
          const base = link.split('#')[0] ?? ''
          expect(await (await fetch(base)).text()).toContain('<title>app</title>')
          const config = (await (await fetch(`${base}config.json`)).json()) as {
            brokerWsUrl: string
          }
          expect(config).toMatchObject({ device: 'kitchen', prefix: 'nocturn/v1' })
          expect(config.brokerWsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/)
          const pairing = parsePairingUri(decodeURIComponent(link.split('#pair=')[1] ?? ''))
          phone = new PhoneClient({
            link: testPhoneLink,
            pairing: { ...pairing, broker: config.brokerWsUrl },
            logger: silentLogger,
          })
          let answered = 0
          phone.on((e) => {
            if (e.kind !== 'pending') return
            const d = decisions[answered++]
            if (d) void phone?.decide(e.request.id, d, 'once')
            // The demo asked again after the last answer: it keeps running until stopped.
            else stop.abort()
          })
          await phone.start()
        })()
      },
    })
    return { code, text }
  } finally {
    await phone?.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('npm start -- --phone (nocturn demo --phone)', () => {
  it('serves the app, prints a pairing link, waits for the phone, and keeps asking after every answer until Ctrl-C', async () => {
    const r = await demo(['approve', 'deny'])
    expect(r.code).toBe(0)
    // By name: WebAuthn (the owner's fingerprint) refuses an IP address.
    expect(r.text).toMatch(/http:\/\/localhost:\d+\/#pair=nocturn-pair%3Av1%3F/)
    expect(r.text).toContain('Waiting for a yes in the browser: "unlock the front door"')
    expect(r.text).toContain('Nocturn: The front door is unlocked for the plumber.')
    // The second request (issue 23, finding 3: the demo no longer ends after the first tap).
    expect(r.text).toContain('Waiting for a yes in the browser: "switch on the porch light"')
    // Issue 44, item 6: an explicit No is said as one, not as "nobody said yes".
    expect(r.text).toContain('Nocturn: The porch light stays off: you said no.')
    expect(r.text).not.toContain('nobody said yes')
    // A third was asked, and Ctrl-C ended the demo while it waited.
    expect(r.text.match(/Ben types on his phone/g)).toHaveLength(3)
    expect(r.text.trimEnd().endsWith('Stopped.')).toBe(true)
  })
})
