import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { isId, newKey } from '../protocol/index.js'

/** Where phone keys live in a development checkout (on the device: the config's phonesDir). */
export const DEV_PHONES_DIR = 'var/phones'

export interface PairedPhone {
  readonly phone: string
  readonly name: string
  readonly createdAt: number
}

interface KeyFile extends PairedPhone {
  readonly v: 1
  /** base64url of the 256-bit key. */
  readonly key: string
}

/**
 * The paired phones' keys: one JSON file per phone, mode 0600, in a folder of mode 0700 — only
 * the user Nocturn runs as can read them. Keys leave this module only as bytes for signing, or
 * once, at pairing, for the person to scan.
 */
export class PhoneKeyStore {
  readonly dir: string
  #cache: { stamp: string; keys: ReadonlyMap<string, Buffer> } | undefined

  constructor(dir: string) {
    this.dir = dir
  }

  /** Creates a key for a new phone. Refuses an id that is already paired (revoke it first). */
  add(phone: string, name: string, now = Date.now()): PairedPhone & { key: Buffer } {
    if (!isId(phone)) throw new Error('a phone id is 1–64 letters, digits, ".", "_" or "-"')
    if (name.length === 0 || name.length > 100) throw new Error('a phone name is 1–100 characters')
    this.#ensureDir()
    const key = newKey()
    const record: KeyFile = { v: 1, phone, name, createdAt: now, key: key.toString('base64url') }
    let fd: number
    try {
      // "wx": never overwrite a paired phone's key by accident; 0600 from the first byte.
      fd = openSync(this.#file(phone), 'wx', 0o600)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new Error(`phone "${phone}" is already paired; revoke it first`)
      }
      throw err
    }
    try {
      writeSync(fd, `${JSON.stringify(record)}\n`)
    } finally {
      closeSync(fd)
    }
    this.#cache = undefined
    return { phone, name, createdAt: now, key }
  }

  /** Forgets a phone's key; true if it was paired. */
  revoke(phone: string): boolean {
    if (!isId(phone)) return false
    try {
      unlinkSync(this.#file(phone))
      this.#cache = undefined
      return true
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw err
    }
  }

  list(): PairedPhone[] {
    return this.#read().map(({ phone, name, createdAt }) => ({ phone, name, createdAt }))
  }

  /** Phone id → key, re-read when the folder changes (pairing or revoking takes effect at once). */
  keys(): ReadonlyMap<string, Buffer> {
    const stamp = this.#stamp()
    if (this.#cache?.stamp === stamp) return this.#cache.keys
    const keys = new Map(this.#read().map((r) => [r.phone, Buffer.from(r.key, 'base64url')]))
    this.#cache = { stamp, keys }
    return keys
  }

  #file(phone: string): string {
    return join(this.dir, `${phone}.json`)
  }

  #ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    chmodSync(this.dir, 0o700)
  }

  #stamp(): string {
    try {
      const s = statSync(this.dir)
      return `${s.mtimeMs}:${s.ino}`
    } catch {
      return 'none'
    }
  }

  #read(): KeyFile[] {
    let names: string[]
    try {
      names = readdirSync(this.dir)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    const out: KeyFile[] = []
    for (const n of names.filter((f) => f.endsWith('.json')).sort()) {
      try {
        const r = JSON.parse(readFileSync(join(this.dir, n), 'utf8')) as Partial<KeyFile>
        const key = Buffer.from(r.key ?? '', 'base64url')
        if (r.v !== 1 || !r.phone || !isId(r.phone) || key.length !== 32) continue
        out.push({
          v: 1,
          phone: r.phone,
          name: r.name ?? r.phone,
          createdAt: r.createdAt ?? 0,
          key: r.key ?? '',
        })
      } catch {
        // A damaged key file pairs nobody; the others still work.
      }
    }
    return out
  }
}
