import type { MqttConnection } from '../adapters/mqtt/connection.js'
import type { Logger } from '../core/logger.js'
import {
  type DecisionMessage,
  type Grant,
  newNonce,
  type OutcomeMessage,
  outcomeSchema,
  type Pairing,
  PROTOCOL_VERSION,
  parseApprovalTopic,
  parsePayload,
  type RequestMessage,
  requestDigest,
  requestSchema,
  signDecision,
  type Topics,
  topicsFor,
  verifyOutcomeMac,
  verifyRequestMac,
} from '../protocol/index.js'
import { phoneConnection } from './phone-connection.js'

export interface PhoneClientOptions {
  readonly pairing: Pairing
  readonly username?: string
  readonly password?: string
  readonly ca?: string | Buffer
  readonly logger: Logger
  readonly now?: () => number
  /** How far the device's clock may be off from ours when judging `expiresAt`. */
  readonly skewMs?: number
}

export type PhoneEvent =
  | { kind: 'pending'; request: RequestMessage }
  /** The card closed: a verified outcome ended it. */
  | { kind: 'gone'; id: string }
  /** A verified outcome (its MAC for this phone checked over the request's digest). */
  | { kind: 'outcome'; outcome: OutcomeMessage }
  /** The broker no longer holds the request; unsigned, so on its own it ends nothing. */
  | { kind: 'cleared'; id: string }
  | { kind: 'refused'; id: string; reason: string }

/**
 * The reference phone: the second implementation of protocol v1, small enough to read next to
 * docs/protocol.md. It shows and answers only requests it can verify with its own key — anything
 * else on the broker (a stranger's request, an overwritten `action`) is refused and never answered —
 * and shows an ending only from an outcome it can verify: a clear or a forged outcome leaves the
 * card as it was until a verified outcome or its `expiresAt`.
 */
export class PhoneClient {
  readonly topics: Topics
  readonly #options: PhoneClientOptions
  readonly #conn: MqttConnection
  readonly #log: Logger
  readonly #now: () => number
  readonly #verified = new Map<string, { request: RequestMessage; digest: string }>()
  /** Digests of requests whose card closed recently, so a repeated outcome still verifies. */
  readonly #ended = new Map<string, string>()
  readonly #listeners: Array<(e: PhoneEvent) => void> = []
  #ready: Promise<void>

  constructor(options: PhoneClientOptions) {
    this.#options = options
    this.topics = topicsFor(options.pairing.prefix, options.pairing.device)
    this.#log = options.logger.child({ component: 'phone', phone: options.pairing.phone })
    this.#now = options.now ?? Date.now
    const { conn, ready } = phoneConnection(
      options,
      'a',
      [this.topics.requests, this.topics.outcomes],
      (topic, payload) => this.#onMessage(topic, payload),
      this.#log,
    )
    this.#conn = conn
    this.#ready = ready
  }

  /** Connects and subscribes; retained requests arrive right after. */
  async start(): Promise<void> {
    this.#conn.start()
    await this.#ready
  }

  on(listener: (e: PhoneEvent) => void): () => void {
    this.#listeners.push(listener)
    return () => {
      const i = this.#listeners.indexOf(listener)
      if (i >= 0) this.#listeners.splice(i, 1)
    }
  }

  /** The verified, unexpired requests now pending. */
  pending(): RequestMessage[] {
    const now = this.#now()
    return [...this.#verified.values()]
      .map((v) => v.request)
      .filter((r) => r.expiresAt > now - (this.#options.skewMs ?? 30_000))
  }

  /** Waits until a verified request with this id is here (retained ones arrive after subscribing). */
  waitFor(id: string, timeoutMs = 5000): Promise<RequestMessage> {
    const have = this.#verified.get(id)
    if (have) return Promise.resolve(have.request)
    return this.#waitEvent(
      (e) => (e.kind === 'pending' && e.request.id === id ? e.request : undefined),
      timeoutMs,
      `no verified request ${id}`,
    )
  }

  /** Waits for the device's outcome for `id`. */
  waitOutcome(id: string, timeoutMs = 5000): Promise<OutcomeMessage> {
    return this.#waitEvent(
      (e) => (e.kind === 'outcome' && e.outcome.id === id ? e.outcome : undefined),
      timeoutMs,
      `no outcome for ${id}`,
    )
  }

  /**
   * Answers a verified request. Refuses anything it has not verified, and any grant but "once" for
   * a critical tool (it asks every time: the device would remember nothing; the phone does not
   * offer it).
   */
  async decide(id: string, decision: 'approve' | 'deny', grant: Grant = 'once'): Promise<void> {
    const v = this.#verified.get(id)
    if (!v) throw new Error(`request ${id} is not pending here, or could not be verified`)
    if (v.request.critical && grant !== 'once') {
      throw new Error(
        `${v.request.tool} is critical: it asks every time, so only "once" can be granted`,
      )
    }
    const { phone, key } = this.#options.pairing
    const fields = {
      id,
      decision,
      grant,
      digest: v.digest,
      phone,
      at: this.#now(),
      nonce: newNonce(),
    }
    const msg: DecisionMessage = {
      v: PROTOCOL_VERSION,
      id,
      decision,
      grant,
      phone,
      at: fields.at,
      nonce: fields.nonce,
      mac: signDecision(key, fields),
    }
    await this.#conn.publish(this.topics.decision(id), JSON.stringify(msg), { qos: 1 })
  }

  async close(): Promise<void> {
    await this.#conn.close()
  }

  #emit(e: PhoneEvent): void {
    for (const l of [...this.#listeners]) l(e)
  }

  #waitEvent<T>(
    pick: (e: PhoneEvent) => T | undefined,
    timeoutMs: number,
    what: string,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        off()
        reject(new Error(what))
      }, timeoutMs)
      const off = this.on((e) => {
        const v = pick(e)
        if (v === undefined) return
        clearTimeout(timer)
        off()
        resolve(v)
      })
    })
  }

  #onMessage(topic: string, payload: Buffer): void {
    const where = parseApprovalTopic(this.topics, topic)
    if (!where) return
    if (where.kind === 'outcome') {
      this.#onOutcome(where.id, payload)
      return
    }
    if (where.kind !== 'request') return
    const id = where.id
    if (payload.length === 0) {
      // Unsigned: anyone on the broker can clear a topic. It means only "the broker no longer
      // holds it"; the card stays until a verified outcome or its expiry.
      if (this.#verified.has(id)) this.#emit({ kind: 'cleared', id })
      return
    }
    // A string is why the request was refused; anything else is the verified request.
    const verdict = this.#verify(id, payload)
    if (typeof verdict === 'string') {
      // Refused: never shown, never answered; a card already shown for this id stays as it was.
      this.#log.warn({ approvalId: id, reason: verdict }, 'request refused')
      this.#emit({ kind: 'refused', id, reason: verdict })
      return
    }
    this.#verified.set(id, verdict)
    this.#emit({ kind: 'pending', request: verdict.request })
  }

  /** An ending counts only if its MAC for this phone verifies over the request's digest. */
  #onOutcome(id: string, payload: Buffer): void {
    const checked = this.#checkOutcome(id, payload)
    if (checked === undefined) return
    if (typeof checked === 'string') {
      this.#log.warn({ approvalId: id, reason: checked }, 'outcome refused')
      this.#emit({ kind: 'refused', id, reason: `outcome ${checked}` })
      return
    }
    const digest = this.#verified.get(id)?.digest
    if (digest !== undefined) {
      this.#verified.delete(id)
      this.#ended.set(id, digest)
      if (this.#ended.size > 256) this.#ended.delete(this.#ended.keys().next().value as string)
      this.#emit({ kind: 'gone', id })
    }
    this.#emit({ kind: 'outcome', outcome: checked })
  }

  /** The verified outcome, a reason to refuse it, or undefined for one about a request never shown. */
  #checkOutcome(id: string, payload: Buffer): OutcomeMessage | string | undefined {
    const r = parsePayload(outcomeSchema, payload)
    if (!r.ok) return r.reason
    const o = r.value
    if (o.id !== id) return 'id-mismatch'
    const digest = this.#verified.get(id)?.digest ?? this.#ended.get(id)
    // Never shown here: there is no card to end, and nothing to verify it against.
    if (digest === undefined) return undefined
    const mac = o.macs?.[this.#options.pairing.phone]
    if (mac === undefined) return 'not-signed-for-this-phone'
    if (!verifyOutcomeMac(this.#options.pairing.key, { ...o, digest }, mac)) return 'bad-mac'
    return o
  }

  #verify(id: string, payload: Buffer): string | { request: RequestMessage; digest: string } {
    const r = parsePayload(requestSchema, payload)
    if (!r.ok) return r.reason
    const req = r.value
    // `v` is checked by the schema (a literal 1); the id must be the topic's.
    if (req.id !== id) return 'id-mismatch'
    if (req.device !== this.#options.pairing.device) return 'wrong-device'
    const digest = requestDigest(r.raw)
    if (digest !== req.digest) return 'digest-mismatch'
    const mac = req.macs[this.#options.pairing.phone]
    if (mac === undefined) return 'not-signed-for-this-phone'
    if (!verifyRequestMac(this.#options.pairing.key, digest, mac)) return 'bad-mac'
    if (req.expiresAt <= this.#now() - (this.#options.skewMs ?? 30_000)) return 'expired'
    return { request: req, digest }
  }
}

/** "once", "session", or a duration ("90s", "30m", "2h", "1d") from now. */
export function parseGrant(text: string, now: number): Grant {
  if (text === 'once' || text === 'session') return text
  const m = /^(\d{1,6})([smhd])$/.exec(text)
  if (!m) throw new Error(`--grant must be once, session or a duration like 30m, 2h, 1d`)
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd']
  return { until: now + Number(m[1]) * unit }
}
