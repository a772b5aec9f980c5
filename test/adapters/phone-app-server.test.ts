import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  hostnameOf,
  type PhoneAppServer,
  startPhoneAppServer,
} from '../../src/adapters/http-static/phone-app-server.js'
import { missingCommands } from '../helpers/system.js'
import { captureLogger } from '../mqtt/fixture.js'

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

/** A raw request: the path goes on the wire exactly as given (fetch would normalise it). */
function get(
  port: number,
  path: string,
  o: { method?: string; headers?: Record<string, string>; tls?: boolean } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = (o.tls ? httpsRequest : httpRequest)(
      {
        host: '127.0.0.1',
        port,
        path,
        method: o.method ?? 'GET',
        headers: o.headers,
        ...(o.tls && { rejectUnauthorized: false }),
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        )
      },
    )
    req.on('error', reject)
    req.end()
  })
}

describe('the phone app server (static files and /config.json)', () => {
  let dir: string
  let root: string
  let server: PhoneAppServer
  const logger = captureLogger()
  const js = `console.log(${JSON.stringify('x'.repeat(4000))})\n`

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nocturn-app-'))
    root = join(dir, 'web')
    mkdirSync(join(root, 'assets'), { recursive: true })
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>Nocturn</title>\n')
    writeFileSync(join(root, 'assets', 'index-abc123.js'), js)
    writeFileSync(join(root, 'assets', 'icon.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
    writeFileSync(join(root, 'sw.js'), 'self.addEventListener("push", () => {})\n')
    // Outside the app: must never be served.
    writeFileSync(join(dir, 'secret.txt'), 'the phone keys live here\n')
    symlinkSync(join(dir, 'secret.txt'), join(root, 'escape.txt'))
    server = await startPhoneAppServer({
      root,
      port: 0,
      host: '127.0.0.1',
      config: (host) => ({
        brokerWsUrl: `ws://${host ?? '?'}:9001`,
        device: 'kitchen',
        prefix: 'nocturn/v1',
      }),
      logger,
    })
  })
  afterAll(async () => {
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('serves the app with its content types, validators and cache rules', async () => {
    const index = await get(server.port, '/')
    expect(index.status).toBe(200)
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(index.headers['cache-control']).toBe('no-cache')
    expect(index.headers['x-content-type-options']).toBe('nosniff')
    expect(index.body.toString()).toContain('<title>Nocturn</title>')

    const asset = await get(server.port, '/assets/index-abc123.js')
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(asset.headers['content-encoding']).toBeUndefined()
    expect(asset.body.toString()).toBe(js)

    const png = await get(server.port, '/assets/icon.png', {
      headers: { 'accept-encoding': 'gzip' },
    })
    expect(png.headers['content-type']).toBe('image/png')
    expect(png.headers['content-encoding']).toBeUndefined()

    const sw = await get(server.port, '/sw.js')
    expect(sw.headers['cache-control']).toBe('no-cache')

    const again = await get(server.port, '/assets/index-abc123.js', {
      headers: { 'if-none-match': String(asset.headers.etag) },
    })
    expect(again.status).toBe(304)
    expect(again.body).toHaveLength(0)

    const head = await get(server.port, '/', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(Number(head.headers['content-length'])).toBe(index.body.length)
    expect(head.body).toHaveLength(0)
  })

  it('gzips text when the browser accepts it', async () => {
    const gz = await get(server.port, '/assets/index-abc123.js', {
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gz.headers.vary).toBe('Accept-Encoding')
    expect(gz.body.length).toBeLessThan(js.length / 10)
    expect(gunzipSync(gz.body).toString()).toBe(js)
  })

  it('/config.json names the broker by the host the browser used, never cached', async () => {
    const r = await get(server.port, '/config.json', { headers: { host: 'kitchen.local:8080' } })
    expect(r.status).toBe(200)
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(r.headers['cache-control']).toBe('no-store')
    expect(JSON.parse(r.body.toString())).toEqual({
      brokerWsUrl: 'ws://kitchen.local:9001',
      device: 'kitchen',
      prefix: 'nocturn/v1',
    })
    expect(hostnameOf('[fe80::1]:8080')).toBe('fe80::1')
    expect(hostnameOf('evil/host')).toBeUndefined()
  })

  it('nothing outside the app folder is reachable: traversal, encoded dots, symlinks, NUL', async () => {
    for (const path of [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/..%2fsecret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/escape.txt',
      '/index.html%00.png',
      '//etc/passwd',
      '/assets',
      '/assets/',
      '/missing.js',
    ]) {
      const r = await get(server.port, path)
      expect(r.status, path).toBe(404)
      expect(r.body.toString(), path).toBe('Not found\n')
    }
    expect((await get(server.port, '/%E0%A4%A')).status).toBe(400)
  })

  it('only GET and HEAD', async () => {
    const r = await get(server.port, '/index.html', { method: 'POST' })
    expect(r.status).toBe(405)
    expect(r.headers.allow).toBe('GET, HEAD')
  })

  it('a folder that is not built yet: /config.json still answers, the app is a 404', async () => {
    const s = await startPhoneAppServer({
      root: join(dir, 'not-built'),
      port: 0,
      host: '127.0.0.1',
      config: () => ({ ok: true }),
      logger,
    })
    try {
      expect((await get(s.port, '/')).status).toBe(404)
      expect((await get(s.port, '/config.json')).status).toBe(200)
      expect(logger.entries).toContainEqual(
        expect.objectContaining({
          fields: expect.objectContaining({ event: 'phone_app_not_built' }),
        }),
      )
    } finally {
      await s.close()
    }
  })

  const noOpenssl = missingCommands('openssl')
  /** A one-day P-256 certificate and its key, made by openssl, as files in `dir`. */
  function selfSigned(name: string, subject: string, extra: string[] = []) {
    const cert = join(dir, `${name}.crt`)
    const key = join(dir, `${name}.key`)
    const made = spawnSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
        ...['-subj', subject, ...extra, '-days', '1', '-keyout', key, '-out', cert],
      ],
      { stdio: 'ignore' },
    )
    expect(made.status).toBe(0)
    return { cert, key }
  }

  it.skipIf(noOpenssl !== undefined)(
    'serves HTTPS with the configured certificate and key',
    async () => {
      const { cert, key } = selfSigned('cert', '/CN=kitchen.local')
      const s = await startPhoneAppServer({
        root,
        port: 0,
        host: '127.0.0.1',
        tls: { cert: readFileSync(cert), key: readFileSync(key) },
        config: () => ({}),
        logger,
      })
      try {
        expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/)
        const r = await get(s.port, '/', { tls: true })
        expect(r.status).toBe(200)
        expect(r.body.toString()).toContain('<title>Nocturn</title>')
      } finally {
        await s.close()
      }
    },
  )

  it.skipIf(noOpenssl !== undefined)(
    'serves the household CA certificate for installation, and refuses a file holding any key',
    async () => {
      const { cert, key } = selfSigned('ca', '/CN=Nocturn household CA', [
        '-addext',
        'basicConstraints=critical,CA:TRUE',
      ])
      const start = (caCert?: Buffer) =>
        startPhoneAppServer({
          root,
          port: 0,
          host: '127.0.0.1',
          ...(caCert && { caCert }),
          config: () => ({}),
          logger,
        })
      const s = await start(readFileSync(cert))
      try {
        const r = await get(s.port, '/household-ca.crt')
        expect(r.status).toBe(200)
        expect(r.headers['content-type']).toBe('application/x-x509-ca-cert')
        expect(r.headers['content-disposition']).toContain('nocturn-household-ca.crt')
        expect(r.body.equals(readFileSync(cert))).toBe(true)
        expect(r.body.toString()).not.toContain('PRIVATE KEY')
      } finally {
        await s.close()
      }
      // Not configured: nothing there.
      const none = await start()
      try {
        expect((await get(none.port, '/household-ca.crt')).status).toBe(404)
      } finally {
        await none.close()
      }
      // The key given by mistake, or a bundle holding it: the server does not start with it.
      const bundle = Buffer.concat([readFileSync(cert), readFileSync(key)])
      await expect(start(bundle)).rejects.toThrow(/holds a private key: serve only ca\.crt/)
      await expect(start(readFileSync(key))).rejects.toThrow(/holds a private key/)
      await expect(start(Buffer.from('not a certificate'))).rejects.toThrow(/not a PEM certificate/)
    },
  )
})
