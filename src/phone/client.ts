import type { Logger } from '../core/logger.js'
import { type Grant, parseApprovalTopic, type Topics, topicsFor } from '../protocol/index.js'
import {
  decisionMessage,
  OWNER_REFUSED_CODE,
  type VerifiedOutcome,
  type VerifiedRequest,
  verifyOutcome,
  verifyReply,
  verifyRequest,
} from '../protocol/phone-side.js'
import { openPhoneSide, type PhoneLinkOptions, type PhoneSide } from './phone-link-options.js'

export interface PhoneClientOptions extends PhoneLinkOptions {
  /** How far the device's clock may be off from ours when judging `expiresAt`. */
  readonly skewMs?: number
}

export type PhoneEvent =
  | { kind: 'pending'; request: VerifiedRequest }
  /** The card closed: a verified outcome ended it. */
  | { kind: 'gone'; id: string }
  /** A verified outcome (its MAC for this phone checked over the request's digest). */
  | { kind: 'outcome'; outcome: VerifiedOutcome }
  /** The broker no longer holds the request; unsigned, so on its own it ends nothing. */
  | { kind: 'cleared'; id: string }
  | { kind: 'refused'; id: string; reason: string }
  /**
   * The device did not take this phone's yes: the owner's check failed (a critical tool needs the
   * screen lock). Signed for this phone alone; the request stays pending.
   */
  | { kind: 'yes-refused'; id: string; reason: string; message: string }

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
  readonly #side: PhoneSide
  readonly #log: Logger
  readonly #verified = new Map<string, VerifiedRequest>()
  /** Digests of requests whose card closed recently, so a repeated outcome still verifies. */
  readonly #ended = new Map<string, string>()
  readonly #listeners: Array<(e: PhoneEvent) => void> = []

  constructor(options: PhoneClientOptions) {
    this.#options = options
    this.topics = topicsFor(options.pairing.prefix, options.pairing.device)
    this.#log = options.logger.child({ component: 'phone', phone: options.pairing.phone })
    const phone = options.pairing.phone
    this.#side = openPhoneSide(options, {
      role: 'a',
      filters: [
        this.topics.requests,
        this.topics.outcomes,
        // The broker lets a phone read replies only under its own user name (docs/protocol.md,
        // `reply/%u`); a shared user would have its whole subscription refused.
        ...(options.username === undefined || options.username === phone
          ? [this.topics.conversationReply(phone)]
          : []),
      ],
      onMessage: (topic, payload) => this.#onMessage(topic, payload),
      logger: this.#log,
    })
  }

  /** Connects and subscribes; retained requests arrive right after. */
  async start(): Promise<void> {
    this.#side.link.start()
    await this.#side.link.ready
  }

  on(listener: (e: PhoneEvent) => void): () => void {
    this.#listeners.push(listener)
    return () => {
      const i = this.#listeners.indexOf(listener)
      if (i >= 0) this.#listeners.splice(i, 1)
    }
  }

  /** The verified, unexpired requests now pending. */
  pending(): VerifiedRequest[] {
    const now = this.#side.now()
    return [...this.#verified.values()].filter((r) => r.expiresAt > now - this.#skew())
  }

  /** Waits until a verified request with this id is here (retained ones arrive after subscribing). */
  waitFor(id: string, timeoutMs = 5000): Promise<VerifiedRequest> {
    const have = this.#verified.get(id)
    if (have) return Promise.resolve(have)
    return this.#waitEvent(
      (e) => (e.kind === 'pending' && e.request.id === id ? e.request : undefined),
      timeoutMs,
      `no verified request ${id}`,
    )
  }

  /** Waits for the device's outcome for `id`; fails at once if the device did not take our yes. */
  waitOutcome(id: string, timeoutMs = 5000): Promise<VerifiedOutcome> {
    return this.#waitEvent(
      (e) => {
        if (e.kind === 'yes-refused' && e.id === id) {
          throw new Error(
            `the speaker did not take this yes: ${e.message} (${e.reason}); ${id} is still pending`,
          )
        }
        return e.kind === 'outcome' && e.outcome.id === id ? e.outcome : undefined
      },
      timeoutMs,
      `no outcome for ${id}`,
    )
  }

  /**
   * Answers a verified request. Refuses anything it has not verified, and any grant but "once" for
   * a critical tool (it asks every time: the device would remember nothing; the phone does not
   * offer it).
   */
  async decide(
    id: string,
    decision: 'approve' | 'deny',
    grant: Grant = 'once',
    /** The owner's WebAuthn assertion, for a critical yes (docs/protocol.md, "The owner's yes"). */
    owner?: unknown,
  ): Promise<void> {
    const request = this.#verified.get(id)
    if (!request) throw new Error(`request ${id} is not pending here, or could not be verified`)
    if (request.critical && grant !== 'once') {
      throw new Error(
        `${request.tool} is critical: it asks every time, so only "once" can be granted`,
      )
    }
    const msg = decisionMessage(
      this.#side.me,
      request,
      decision,
      grant,
      this.#side.now(),
      undefined,
      owner,
    )
    await this.#side.link.publish(this.topics.decision(id), JSON.stringify(msg), {
      qos: 1,
      retain: false,
    })
  }

  async close(): Promise<void> {
    await this.#side.link.close()
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
        let v: T | undefined
        try {
          v = pick(e)
        } catch (err) {
          clearTimeout(timer)
          off()
          reject(err)
          return
        }
        if (v === undefined) return
        clearTimeout(timer)
        off()
        resolve(v)
      })
    })
  }

  #onMessage(topic: string, payload: Buffer): void {
    if (topic === this.topics.conversationReply(this.#side.me.phone)) {
      this.#onReply(payload)
      return
    }
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
    // The device's clock may be behind ours: a request is refused as expired only past the skew.
    const verdict = verifyRequest(this.#side.me, id, payload, this.#side.now() - this.#skew())
    if (!verdict.ok) {
      // Refused: never shown, never answered; a card already shown for this id stays as it was.
      this.#log.warn(
        { event: 'request_refused', approvalId: id, reason: verdict.reason },
        'request refused',
      )
      this.#emit({ kind: 'refused', id, reason: verdict.reason })
      return
    }
    this.#verified.set(id, verdict.value)
    this.#emit({ kind: 'pending', request: verdict.value })
  }

  /**
   * The reply topic also carries the answers to this phone's conversation requests (another
   * client's business): only a verified owner's refusal of a request shown here is acted on.
   */
  #onReply(payload: Buffer): void {
    const r = verifyReply(this.#side.me, payload)
    if (!r.ok || r.value.kind !== 'error' || !this.#verified.has(r.value.re)) return
    const body = (r.value.body ?? {}) as { code?: unknown; reason?: unknown; message?: unknown }
    if (body.code !== OWNER_REFUSED_CODE) return
    this.#emit({
      kind: 'yes-refused',
      id: r.value.re,
      reason: String(body.reason),
      message: String(body.message),
    })
  }

  /** An ending counts only if its MAC for this phone verifies over the request's digest. */
  #onOutcome(id: string, payload: Buffer): void {
    const shown = this.#verified.get(id)
    const digest = shown?.digest ?? this.#ended.get(id)
    // Never shown here: there is no card to end, and nothing to verify it against.
    if (digest === undefined) return
    const checked = verifyOutcome(this.#side.me, id, digest, payload)
    if (!checked.ok) {
      this.#log.warn(
        { event: 'outcome_refused', approvalId: id, reason: checked.reason },
        'outcome refused',
      )
      this.#emit({ kind: 'refused', id, reason: `outcome ${checked.reason}` })
      return
    }
    if (shown !== undefined) {
      this.#verified.delete(id)
      this.#ended.set(id, digest)
      if (this.#ended.size > 256) this.#ended.delete(this.#ended.keys().next().value as string)
      this.#emit({ kind: 'gone', id })
    }
    this.#emit({ kind: 'outcome', outcome: checked.value })
  }

  #skew(): number {
    return this.#options.skewMs ?? 30_000
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
