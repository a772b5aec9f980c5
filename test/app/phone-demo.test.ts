import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { runPhoneDemo } from '../../src/app/phone-demo.js'
import { silentLogger } from '../../src/core/logger.js'
import { PhoneClient } from '../../src/phone/client.js'
import { parsePairingUri } from '../../src/protocol/index.js'

/** The demo, with a phone (the reference client, over the broker's WebSocket) in the browser's place. */
async function demo(decision: 'approve' | 'deny') {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-phone-demo-'))
  const web = join(dir, 'web')
  const { mkdirSync } = await import('node:fs')
  mkdirSync(web)
  writeFileSync(join(web, 'index.html'), '<!doctype html><title>app</title>\n')
  const out = new PassThrough()
  let text = ''
  out.on('data', (d: Buffer) => {
    text += d.toString()
  })
  let phone: PhoneClient | undefined
  try {
    const code = await runPhoneDemo({
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
            pairing: { ...pairing, broker: config.brokerWsUrl },
            logger: silentLogger,
          })
          phone.on((e) => {
            if (e.kind === 'pending') void phone?.decide(e.request.id, decision, 'once')
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
  it('serves the app, prints a pairing link, and waits until the phone approves', async () => {
    const r = await demo('approve')
    expect(r.code).toBe(0)
    expect(r.text).toMatch(/http:\/\/127\.0\.0\.1:\d+\/#pair=nocturn-pair%3Av1%3F/)
    expect(r.text).toContain('Waiting for a yes in the browser: "unlock the front door"')
    expect(r.text).toContain('Nocturn: The front door is unlocked for the plumber.')
  })

  it('a deny keeps the door locked', async () => {
    const r = await demo('deny')
    expect(r.code).toBe(0)
    expect(r.text).toContain('Nocturn: The front door stays locked: nobody said yes.')
  })
})
