import { fromBase64url } from '../../src/protocol/phone-crypto.js'
import { DEFAULT_PREFIX, isId, isPrefix } from '../../src/protocol/topics.js'

/** One paired speaker as the app keeps it: the pairing, plus the broker login typed once. */
export interface Speaker {
  readonly device: string
  readonly prefix: string
  readonly phone: string
  /** base64url of the 256-bit key; it stays in this browser's storage and nowhere else. */
  readonly key: string
  /** The broker as the pairing names it (mqtt://…); a ws:// or wss:// one is used directly. */
  readonly broker: string
  /** The WebSocket URL the app connects to; empty until known (pairing or /config.json). */
  readonly wsUrl: string
  readonly name: string
  readonly username: string
  readonly password: string
}

export type PairingResult = { ok: true; speaker: Speaker } | { ok: false; problem: string }

const SCHEME = 'nocturn-pair:v1?'

/**
 * Reads a pairing: the `nocturn-pair:` URI itself, or a whole app link with `#pair=<URI>`. The
 * problem sentences say what to do, because a person reads them on a phone.
 */
export function parsePairing(input: string): PairingResult {
  let text = input.trim()
  const hashAt = text.indexOf('#pair=')
  if (hashAt >= 0) text = safeDecode(text.slice(hashAt + 6))
  else if (text.startsWith('pair=')) text = safeDecode(text.slice(5))
  if (!text.startsWith(SCHEME)) {
    return {
      ok: false,
      problem:
        'That is not a Nocturn pairing link. Ask whoever looks after the speaker to pair this phone (they type nocturn pair on the speaker), then scan the QR code it shows or paste the link it prints: it starts with nocturn-pair:v1?.',
    }
  }
  const q = new URLSearchParams(text.slice(SCHEME.length))
  const device = q.get('device') ?? ''
  const phone = q.get('phone') ?? ''
  const prefix = q.get('prefix') ?? DEFAULT_PREFIX
  const broker = q.get('broker') ?? ''
  const ws = q.get('ws') ?? ''
  const keyText = q.get('key') ?? ''
  const key = fromBase64url(keyText)
  const cut = ' The link was probably cut short: copy it again, whole.'
  if (!isId(device)) return { ok: false, problem: `The pairing link names no speaker.${cut}` }
  if (!isId(phone)) return { ok: false, problem: `The pairing link names no phone.${cut}` }
  if (!isPrefix(prefix))
    return { ok: false, problem: `The pairing link has a bad topic prefix.${cut}` }
  if (key?.length !== 32) {
    return { ok: false, problem: `The pairing link's key is not 256 bits.${cut}` }
  }
  const wsUrl = /^wss?:\/\//.test(ws) ? ws : /^wss?:\/\//.test(broker) ? broker : ''
  return {
    ok: true,
    speaker: {
      device,
      prefix,
      phone,
      key: keyText,
      broker,
      wsUrl,
      name: q.get('name') || device,
      username: phone,
      password: '',
    },
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

export function speakerKey(s: Pick<Speaker, 'prefix' | 'device' | 'phone'>): string {
  return `${s.prefix}/${s.device}#${s.phone}`
}

const STORE_KEY = 'nocturn.speakers.v1'

/** The part of localStorage the app uses. */
export interface KeyValueStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
}

/** The paired speakers, from localStorage; unreadable storage is reported, never overwritten. */
export class SpeakerStore {
  readonly #storage: KeyValueStorage

  constructor(storage: KeyValueStorage) {
    this.#storage = storage
  }

  load(): Speaker[] {
    const raw = this.#storage.getItem(STORE_KEY)
    if (!raw) return []
    try {
      const list = JSON.parse(raw) as unknown
      return Array.isArray(list) ? (list as Speaker[]) : []
    } catch {
      return []
    }
  }

  /** Adds or replaces (same device and phone) a speaker; the others are kept as they are. */
  save(speaker: Speaker): void {
    const list = this.load().filter((s) => speakerKey(s) !== speakerKey(speaker))
    list.push(speaker)
    this.#storage.setItem(STORE_KEY, JSON.stringify(list))
  }

  remove(key: string): void {
    this.#storage.setItem(
      STORE_KEY,
      JSON.stringify(this.load().filter((s) => speakerKey(s) !== key)),
    )
  }
}
