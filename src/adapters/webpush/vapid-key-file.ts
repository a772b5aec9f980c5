import { createECDH } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

/** The device's VAPID key pair (RFC 8292), base64url as the app and `web-push` take them. */
export interface VapidKeys {
  readonly publicKey: string
  readonly privateKey: string
}

interface VapidFile extends VapidKeys {
  readonly v: 1
  readonly createdAt: number
}

/**
 * The device's VAPID key pair, made once and kept in one file of mode 0600 beside the paired
 * phones' keys (the folder 0700): the push services know the device by its public key, so a new
 * pair would silence every phone's subscription. The private key leaves this file only to sign.
 */
export function loadOrCreateVapidKeys(path: string, now = Date.now()): VapidKeys {
  const read = readVapidKeys(path)
  if (read) return read
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  // A P-256 pair in the form VAPID uses: the raw uncompressed public point and the raw scalar.
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  const keys: VapidKeys = {
    publicKey: ecdh.getPublicKey().toString('base64url'),
    // The scalar can come back shorter than 32 bytes (a leading zero); VAPID wants all 32.
    privateKey: Buffer.concat([Buffer.alloc(32), ecdh.getPrivateKey()])
      .subarray(-32)
      .toString('base64url'),
  }
  const record: VapidFile = { v: 1, createdAt: now, ...keys }
  let fd: number
  try {
    // "wx": two starts racing both write once; the loser reads the winner's pair.
    fd = openSync(path, 'wx', 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      const other = readVapidKeys(path)
      if (other) return other
    }
    throw err
  }
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`)
  } finally {
    closeSync(fd)
  }
  return keys
}

/**
 * The pair in the file, or undefined when there is none. A damaged file is an error naming the
 * file and the fix — never overwritten, since that would silence every subscribed phone unasked.
 */
function readVapidKeys(path: string): VapidKeys | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  let r: Partial<VapidFile> | undefined
  try {
    r = JSON.parse(text) as Partial<VapidFile>
  } catch {
    r = undefined
  }
  const pub = Buffer.from(r?.publicKey ?? '', 'base64url')
  const priv = Buffer.from(r?.privateKey ?? '', 'base64url')
  if (r?.v !== 1 || pub.length !== 65 || priv.length !== 32) {
    throw new Error(
      `${path} is not a VAPID key file; move it aside and restart to make a new pair (every phone must then subscribe again)`,
    )
  }
  return { publicKey: r.publicKey as string, privateKey: r.privateKey as string }
}
