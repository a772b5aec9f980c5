import { X509Certificate } from 'node:crypto'
import { realpathSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttps } from 'node:https'
import type { AddressInfo } from 'node:net'
import { resolve, sep } from 'node:path'
import { gzipSync } from 'node:zlib'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import { compressible, contentTypeOf } from './content-types.js'

export interface PhoneAppServerOptions {
  /** The folder of the built app (index.html and its assets). */
  readonly root: string
  /** 0 picks a free port. */
  readonly port: number
  /** The address to listen on; every interface if unset. */
  readonly host?: string
  /** Serve HTTPS with this certificate and key (PEM). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer }
  /**
   * The household CA's certificate (PEM), served at `/household-ca.crt` for the phones to install
   * (docs/phone-app.md, "HTTPS with a household CA"). Checked first: a certificate of a CA, and
   * nothing else — a file that holds any private key is refused, never served.
   */
  readonly caCert?: Buffer
  /**
   * The body of `GET /config.json`. `hostname` is the name the browser reached this server by
   * (from the Host header), so a broker on this same machine can be named the same way.
   */
  readonly config: (hostname: string | undefined) => unknown
  readonly logger: Logger
}

export interface PhoneAppServer {
  readonly port: number
  /** e.g. `http://127.0.0.1:8080/` (the listening address; phones use the device's name). */
  readonly url: string
  close(): Promise<void>
}

interface Cached {
  readonly mtimeMs: number
  readonly size: number
  readonly body: Buffer
  readonly etag: string
  gz?: Buffer
}

/** Where the household CA's certificate is served (the app's plain-HTTP hint links to it). */
const CA_CERT_PATH = '/household-ca.crt'

/** Files this large are read each time instead of kept in memory (the app's are far smaller). */
const CACHE_MAX_BYTES = 1024 * 1024
/** Below this, gzip costs more than it saves. */
const GZIP_MIN_BYTES = 512

/**
 * Serves the household phone app (docs/phone-app.md): the static files of the built app and one
 * small JSON, `/config.json`, telling the app where the broker's WebSocket listener is. Nothing
 * else: the app talks to the broker itself; this server is no proxy. Only GET and HEAD; a path
 * that leaves the app's folder (`..`, an encoded `%2e%2e`, a symlink out) is a 404 like any
 * missing file.
 */
export async function startPhoneAppServer(options: PhoneAppServerOptions): Promise<PhoneAppServer> {
  const log = options.logger
  const root = realRoot(options.root)
  const cache = new Map<string, Cached>()
  const caCert = options.caCert && caCertificateOnly(options.caCert)
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    serve(req, res).catch((err: unknown) => {
      log.error(
        { event: 'phone_app_request_failed', err: errorText(err), path: pathOf(req) },
        'phone app request failed',
      )
      if (!res.headersSent) send(res, req, 500, 'text/plain; charset=utf-8', 'Server error\n')
      else res.destroy()
    })
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD')
      send(res, req, 405, 'text/plain; charset=utf-8', 'Only GET and HEAD\n')
      return
    }
    let path: string
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://device').pathname)
    } catch {
      send(res, req, 400, 'text/plain; charset=utf-8', 'Bad path\n')
      return
    }
    if (path === '/config.json') {
      res.setHeader('Cache-Control', 'no-store')
      const body = JSON.stringify(options.config(hostnameOf(req.headers.host)))
      send(res, req, 200, 'application/json; charset=utf-8', body)
      return
    }
    if (path === CA_CERT_PATH && caCert) {
      res.setHeader('Cache-Control', 'no-cache')
      // The type phones offer to install; the name a person sees in Downloads and Files.
      res.setHeader('Content-Disposition', 'attachment; filename="nocturn-household-ca.crt"')
      send(res, req, 200, 'application/x-x509-ca-cert', caCert)
      return
    }
    const file = root && inside(root, path.endsWith('/') ? `${path}index.html` : path)
    const entry = file ? await load(file) : undefined
    if (!entry) {
      send(res, req, 404, 'text/plain; charset=utf-8', 'Not found\n')
      return
    }
    res.setHeader('ETag', entry.etag)
    // Vite names what it builds under assets/ by content hash: those never change under a name.
    res.setHeader(
      'Cache-Control',
      path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    )
    if (req.headers['if-none-match'] === entry.etag) {
      res.statusCode = 304
      res.end()
      return
    }
    const type = contentTypeOf(file as string)
    let body = entry.body
    if (compressible(type) && body.length >= GZIP_MIN_BYTES) {
      res.setHeader('Vary', 'Accept-Encoding')
      if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
        entry.gz ??= gzipSync(entry.body)
        body = entry.gz
        res.setHeader('Content-Encoding', 'gzip')
      }
    }
    send(res, req, 200, type, body)
  }

  async function load(file: string): Promise<Cached | undefined> {
    let st: ReturnType<typeof statSync>
    try {
      st = statSync(file)
    } catch {
      return undefined
    }
    if (!st.isFile()) return undefined
    const hit = cache.get(file)
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit
    const body = await readFile(file)
    const entry: Cached = {
      mtimeMs: st.mtimeMs,
      size: st.size,
      body,
      etag: `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`,
    }
    if (body.length <= CACHE_MAX_BYTES) cache.set(file, entry)
    return entry
  }

  /** The file for a URL path, or undefined if it would leave the root (symlinks resolved). */
  function inside(base: string, urlPath: string): string | undefined {
    if (urlPath.includes('\0')) return undefined
    const full = resolve(base, `.${urlPath}`)
    if (!full.startsWith(base + sep)) return undefined
    let real: string
    try {
      real = realpathSync(full)
    } catch {
      return undefined
    }
    return real.startsWith(base + sep) ? real : undefined
  }

  function realRoot(dir: string): string | undefined {
    try {
      return realpathSync(dir)
    } catch {
      log.warn(
        { event: 'phone_app_not_built', root: dir },
        'phone app not built: only /config.json is served',
      )
      return undefined
    }
  }

  const server = options.tls
    ? createHttps({ cert: options.tls.cert, key: options.tls.key }, handler)
    : createHttp(handler)
  await new Promise<void>((ok, fail) => {
    server.once('error', fail)
    server.listen(options.port, options.host, () => {
      server.off('error', fail)
      ok()
    })
  })
  server.on('error', (err) =>
    log.error({ event: 'phone_app_server_error', err: errorText(err) }, 'phone app server error'),
  )
  const port = (server.address() as AddressInfo).port
  const scheme = options.tls ? 'https' : 'http'
  const shown =
    !options.host || options.host === '::' || options.host === '0.0.0.0'
      ? '127.0.0.1'
      : options.host
  const url = `${scheme}://${shown.includes(':') ? `[${shown}]` : shown}:${port}/`
  log.info({ port, scheme, root: root ?? options.root }, 'phone app served')
  return {
    port,
    url,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done())
        server.closeAllConnections()
      }),
  }
}

function send(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  type: string,
  body: string | Buffer,
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  res.statusCode = status
  res.setHeader('Content-Type', type)
  res.setHeader('Content-Length', bytes.length)
  res.setHeader('X-Content-Type-Options', 'nosniff')
  res.setHeader('Referrer-Policy', 'no-referrer')
  res.end(req.method === 'HEAD' ? undefined : bytes)
}

function pathOf(req: IncomingMessage): string {
  return (req.url ?? '').split('?')[0] ?? ''
}

/** `kitchen.local:8080` → `kitchen.local`; `[fe80::1]:8080` → `fe80::1`. */
export function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(host) ?? /^([^:]+)(?::\d+)?$/.exec(host)
  const name = m?.[1]
  return name && /^[A-Za-z0-9.:_-]{1,253}$/.test(name) ? name : undefined
}

/**
 * The PEM as it may be served: one or more certificates, the first a CA's, and no private key of
 * any kind (a `ca.key` given by mistake, or a PEM bundle holding one). Throws naming what is wrong.
 */
function caCertificateOnly(pem: Buffer): Buffer {
  const text = pem.toString('utf8')
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw new Error('the household CA file holds a private key: serve only ca.crt, never ca.key')
  }
  let cert: X509Certificate
  try {
    cert = new X509Certificate(pem)
  } catch {
    throw new Error('the household CA file is not a PEM certificate')
  }
  if (!cert.ca) throw new Error('the household CA file is not a CA certificate')
  return pem
}
