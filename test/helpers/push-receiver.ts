import {
  createDecipheriv,
  createECDH,
  createPublicKey,
  hkdfSync,
  randomBytes,
  verify,
} from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { PushSubscription } from '../../src/ports/push-subscriptions.js'

/**
 * RFC 8291 decryption as a browser does it, written here with Node's crypto alone (nothing of
 * `web-push` or `http_ece`), so the device's encryption is checked by an independent receiver.
 * `body` is the aes128gcm message (RFC 8188: salt, rs, idlen, keyid = the sender's public key).
 */
export function decryptPush(body: Buffer, uaPrivate: Buffer, auth: Buffer): Buffer {
  const salt = body.subarray(0, 16)
  const rs = body.readUInt32BE(16)
  const idlen = body[20] ?? 0
  const asPublic = body.subarray(21, 21 + idlen)
  const ciphertext = body.subarray(21 + idlen)
  if (idlen !== 65) throw new Error(`keyid is ${idlen} bytes, not a P-256 public key`)
  if (ciphertext.length > rs) throw new Error('more than one record')
  const ua = createECDH('prime256v1')
  ua.setPrivateKey(uaPrivate)
  const uaPublic = ua.getPublicKey()
  const ecdh = ua.computeSecret(asPublic)
  const info = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic])
  const ikm = Buffer.from(hkdfSync('sha256', ecdh, auth, info, 32))
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, 'Content-Encoding: aes128gcm\0', 16))
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, 'Content-Encoding: nonce\0', 12))
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce)
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16))
  const padded = Buffer.concat([
    decipher.update(ciphertext.subarray(0, ciphertext.length - 16)),
    decipher.final(),
  ])
  // The last record ends in 0x02 followed by zero padding.
  let end = padded.length - 1
  while (end >= 0 && padded[end] === 0) end--
  if (padded[end] !== 2) throw new Error('no last-record delimiter')
  return padded.subarray(0, end)
}

interface VapidClaims {
  readonly aud: string
  readonly exp: number
  readonly sub: string
}

/**
 * Checks a VAPID `Authorization: vapid t=<JWT>, k=<key>` header (RFC 8292 §3): an ES256 JWT whose
 * signature verifies with `k`. Returns the key and the claims; throws naming what is wrong.
 */
function checkVapid(header: string | undefined): { key: string; claims: VapidClaims } {
  const m = /^vapid t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+), k=([A-Za-z0-9_-]+)$/.exec(
    header ?? '',
  )
  if (!m?.[1] || !m[2]) throw new Error(`not a vapid Authorization header: ${header}`)
  const [h, p, s] = m[1].split('.') as [string, string, string]
  const head = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: string }
  if (head.alg !== 'ES256') throw new Error(`alg ${head.alg}, not ES256`)
  const raw = Buffer.from(m[2], 'base64url')
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: raw.subarray(1, 33).toString('base64url'),
      y: raw.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  })
  const ok = verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(s, 'base64url'),
  )
  if (!ok) throw new Error('the JWT signature does not verify with k')
  return { key: m[2], claims: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) }
}

export interface ReceivedPush {
  readonly name: string
  readonly headers: IncomingMessage['headers']
  readonly body: Buffer
  /** The plaintext, decrypted with the subscription's private key. */
  readonly plaintext: string
  readonly vapid: { key: string; claims: VapidClaims }
  /** What the receiver answered. */
  readonly status: number
}

/** A browser's subscription as the receiver holds it: the public part and its private key. */
export interface TestSubscription extends PushSubscription {
  readonly name: string
  readonly uaPrivate: Buffer
  readonly authSecret: Buffer
}

/**
 * A push service on loopback: each subscription is a path; every push is decrypted with that
 * subscription's private key and its VAPID header checked, then answered with the next status of
 * that subscription's script (201 when the script is spent).
 */
export class PushReceiver {
  readonly received: ReceivedPush[] = []
  readonly errors: string[] = []
  readonly #server: Server
  readonly #subs = new Map<string, TestSubscription>()
  readonly #scripts = new Map<string, number[]>()
  readonly #waiters: Array<() => void> = []

  private constructor(server: Server) {
    this.#server = server
  }

  static async start(): Promise<PushReceiver> {
    const server = createServer()
    const receiver = new PushReceiver(server)
    server.on('request', (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const status = receiver.#receive(req, Buffer.concat(chunks))
        res.writeHead(status, status === 429 ? { 'retry-after': '0' } : {})
        res.end()
        for (const w of receiver.#waiters.splice(0)) w()
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    return receiver
  }

  get origin(): string {
    const { port } = this.#server.address() as AddressInfo
    return `http://127.0.0.1:${port}`
  }

  /** A new subscription, as a browser's PushManager would make one. */
  subscription(name: string): TestSubscription {
    const ua = createECDH('prime256v1')
    ua.generateKeys()
    const authSecret = randomBytes(16)
    const s: TestSubscription = {
      name,
      endpoint: `${this.origin}/push/${name}`,
      p256dh: ua.getPublicKey().toString('base64url'),
      auth: authSecret.toString('base64url'),
      uaPrivate: ua.getPrivateKey(),
      authSecret,
    }
    this.#subs.set(name, s)
    return s
  }

  /** The statuses the next pushes to `name` are answered with, in order. */
  answer(name: string, ...statuses: number[]): void {
    this.#scripts.set(name, statuses)
  }

  /** Resolves once `n` pushes have arrived in all (bounded by `timeoutMs`). */
  async waitFor(n: number, timeoutMs = 5000): Promise<ReceivedPush[]> {
    const end = Date.now() + timeoutMs
    while (this.received.length < n) {
      if (Date.now() > end) throw new Error(`${this.received.length} of ${n} pushes arrived`)
      await new Promise<void>((r) => {
        this.#waiters.push(r)
        setTimeout(r, 50)
      })
    }
    return this.received.slice(0, n)
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.#server.closeAllConnections()
      this.#server.close(() => r())
    })
  }

  #receive(req: IncomingMessage, body: Buffer): number {
    const name = /^\/push\/([^/]+)$/.exec(req.url ?? '')?.[1]
    const sub = name === undefined ? undefined : this.#subs.get(name)
    if (!name || !sub) return 404
    try {
      if (req.headers['content-encoding'] !== 'aes128gcm') {
        throw new Error(`Content-Encoding ${req.headers['content-encoding']}`)
      }
      const vapid = checkVapid(req.headers.authorization)
      const plaintext = decryptPush(body, sub.uaPrivate, sub.authSecret).toString('utf8')
      const status = this.#scripts.get(name)?.shift() ?? 201
      this.received.push({ name, headers: req.headers, body, plaintext, vapid, status })
      return status
    } catch (err) {
      this.errors.push(`${name}: ${(err as Error).message}`)
      return 400
    }
  }
}
