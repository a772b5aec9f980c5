import { BoundedMap } from '../core/bounded-map.js'
import type { Clock } from '../ports/clock.js'
import { hmacHex, macEquals } from './crypto.js'

/** The paired phones and their keys, read fresh for each message so a revocation counts at once. */
export type PhoneKeys = () => ReadonlyMap<string, Uint8Array>

/**
 * Why a phone's signed message was refused, as docs/protocol.md names them; checked in this order,
 * the first that fails is the reason. Decisions and conversation requests share these four.
 */
export type PhoneRefusal = 'unknown-phone' | 'bad-mac' | 'outside-window' | 'replayed-nonce'

/** What every message a phone signs carries besides its own fields. */
export interface PhoneSigned {
  readonly phone: string
  /** The phone's wall clock when it signed, ms since the epoch. */
  readonly at: number
  readonly nonce: string
  /** Hex HMAC-SHA256 over the message's canonical form. */
  readonly mac: string
}

export type PhoneVerdict =
  | { readonly ok: true; readonly key: Uint8Array }
  | {
      readonly ok: false
      readonly reason: PhoneRefusal
      /** What a log line may say about it (times only; never a key or a MAC). */
      readonly fields: Readonly<Record<string, unknown>>
    }

export interface PhoneVerifierOptions {
  readonly phones: PhoneKeys
  /** Wall clock: phones sign with theirs, so `at` is compared with ours. */
  readonly clock: Pick<Clock, 'now'>
  /** How far a phone's clock may be off (docs/protocol.md: 30 s). */
  readonly skewMs?: number
  /** How many nonces are remembered; the oldest are forgotten beyond it. */
  readonly remember?: number
}

const DEFAULT_SKEW_MS = 30_000

/**
 * The one check of a phone's signed message (docs/protocol.md, "What the device checks" for
 * decisions and for conversation requests): the phone is paired, the MAC over the message's
 * canonical form verifies, `at` lies in the time window, and the nonce is new for that phone.
 * A nonce is remembered only once everything else passed, so junk costs no memory.
 */
export class PhoneVerifier {
  readonly #phones: PhoneKeys
  readonly #clock: Pick<Clock, 'now'>
  readonly #skew: number
  readonly #nonces: BoundedMap<string, true>

  constructor(options: PhoneVerifierOptions) {
    this.#phones = options.phones
    this.#clock = options.clock
    this.#skew = options.skewMs ?? DEFAULT_SKEW_MS
    this.#nonces = new BoundedMap(options.remember ?? 4096)
  }

  /**
   * `signedText` is the canonical form the MAC covers (from forms.ts). `within` is the life of what
   * the message answers (a decision: the request's createdAt..expiresAt): `at` must fall inside it,
   * give or take the skew. Without it, `at` must be within the skew of our clock, either way. A
   * message from the future (beyond the skew) is refused in both cases.
   */
  verify(
    m: PhoneSigned,
    signedText: string,
    within?: { readonly from: number; readonly to: number },
  ): PhoneVerdict {
    const key = this.#phones().get(m.phone)
    if (!key) return refuse('unknown-phone')
    if (!macEquals(hmacHex(key, signedText), m.mac)) return refuse('bad-mac')
    const now = this.#clock.now()
    const skew = this.#skew
    const from = within ? within.from - skew : now - skew
    const to = within ? Math.min(within.to, now) + skew : now + skew
    if (m.at < from || m.at > to) return refuse('outside-window', { at: m.at, now })
    const nonceKey = `${m.phone}:${m.nonce}`
    if (this.#nonces.has(nonceKey)) return refuse('replayed-nonce')
    this.#nonces.set(nonceKey, true)
    return { ok: true, key }
  }
}

function refuse(reason: PhoneRefusal, fields: Record<string, unknown> = {}): PhoneVerdict {
  return { ok: false, reason, fields }
}
