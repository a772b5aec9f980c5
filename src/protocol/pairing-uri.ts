import { DEFAULT_PREFIX, isId, isPrefix } from './topics.js'

/**
 * What a phone needs to take part, as one URI (shown once, as text and as a QR code):
 * `nocturn-pair:v1?broker=<url>&device=<id>&prefix=<prefix>&phone=<id>&key=<base64url>`.
 */
export interface Pairing {
  readonly broker: string
  readonly device: string
  readonly prefix: string
  readonly phone: string
  readonly key: Buffer
}

const SCHEME = 'nocturn-pair:v1'

export function pairingUri(p: Pairing): string {
  const q = new URLSearchParams({
    broker: p.broker,
    device: p.device,
    prefix: p.prefix,
    phone: p.phone,
    key: p.key.toString('base64url'),
  })
  return `${SCHEME}?${q.toString()}`
}

export function parsePairingUri(uri: string): Pairing {
  const trimmed = uri.trim()
  if (!trimmed.startsWith(`${SCHEME}?`)) throw new Error('not a nocturn pairing URI')
  const q = new URLSearchParams(trimmed.slice(SCHEME.length + 1))
  const broker = q.get('broker') ?? ''
  const device = q.get('device') ?? ''
  const prefix = q.get('prefix') ?? DEFAULT_PREFIX
  const phone = q.get('phone') ?? ''
  const key = Buffer.from(q.get('key') ?? '', 'base64url')
  if (!/^mqtts?:\/\//.test(broker))
    throw new Error('pairing URI: broker must be mqtt:// or mqtts://')
  if (!isId(device) || !isId(phone)) throw new Error('pairing URI: bad device or phone id')
  if (!isPrefix(prefix)) throw new Error('pairing URI: bad prefix')
  if (key.length !== 32) throw new Error('pairing URI: the key must be 256 bits')
  return { broker, device, prefix, phone, key }
}
