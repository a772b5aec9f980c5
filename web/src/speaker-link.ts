import type { GrantForm } from '../../src/protocol/forms.js'
import { fromBase64url, newNonce } from '../../src/protocol/phone-crypto.js'
import {
  decisionMessage,
  OWNER_REFUSED_CODE,
  type PhoneIdentity,
  parseJsonObject,
  phoneRequestMessage,
  type VerifiedOutcome,
  type VerifiedReply,
  type VerifiedRequest,
  verifyOutcome,
  verifyReply,
  verifyRequest,
} from '../../src/protocol/phone-side.js'
import { isSensitivity, type Sensitivity } from '../../src/protocol/sensitivity.js'
import { parseApprovalTopic, type Topics, topicsFor } from '../../src/protocol/topics.js'
import { MqttClient } from './mqtt/client.js'
import { type Speaker, speakerKey } from './pairing.js'
import { ownerRefusedWords } from './refusal-words.js'
import { type ProviderHealth, parseProviders } from './voice-service.js'

export interface SpeakerStatus {
  readonly online: boolean
  readonly state: string
  readonly muted: boolean | null
  /** 0–100 %, from a device that says it (docs/protocol.md, "Speaker settings"). */
  readonly volume?: number
  /** The wake word's sensitivity, from a device that listens for one and says it. */
  readonly sensitivity?: Sensitivity
  /** Each live provider's last attempt, from a device that has tried one. */
  readonly providers?: ProviderHealth[]
  /** The speaker's own check of the wake phrase (docs/protocol.md, "Status"). */
  readonly wakeCheck?: WakeCheckState
}

/** The local wake check as a phone shows it: the states, the streak toward trust. */
export interface WakeCheckState {
  readonly state: 'off' | 'shadow' | 'on' | 'earned'
  readonly streak?: number
  readonly of?: number
}

/** A verified request and what became of it. */
export interface Card {
  readonly speaker: string
  readonly request: VerifiedRequest
  /** The verified signed outcome, or `expired` when its time ran out here first. */
  ended?: VerifiedOutcome | { state: 'expired'; local: true }
  /** When this phone saw it end: a finished card stays a minute from then, then leaves. */
  endedAt?: number
  /** What this phone answered, while it waits for the speaker's outcome. */
  sent?: 'approve' | 'deny' | undefined
  /**
   * Where that answer is: `queued` while the phone is not connected (this link holds it and sends
   * it on reconnect), `delivered` once the broker acknowledged it. A card says which, and after its
   * ending what became of an answer that never got through.
   */
  delivery?: 'queued' | 'delivered' | undefined
  /** The signed answer held while offline, sent once the phone hears the outcomes again. */
  held?: string | undefined
  /** The signed answer this phone gave, sent again if the speaker asks once more (see #onRequest). */
  answer?: string | undefined
  /** The device refused or the decision could not be sent. */
  problem?: string | undefined
  readonly shownAt: number
}

/**
 * How this phone stands with one speaker's broker, in the words the app shows on every screen:
 * `connecting` (the first attempt), `connected`, `reconnecting` (it was connected and lost it),
 * `unreachable` (never reached yet; retrying), `refused` (the login was refused: retrying cannot
 * help), `needs-login` (the broker refused a phone without a password), `no-broker` (no WebSocket
 * URL known).
 */
export type LinkState =
  | 'connecting'
  | 'connected'
  | 'reconnecting'
  | 'unreachable'
  | 'refused'
  | 'needs-login'
  | 'no-broker'

export interface CallHandlers {
  /** Every reply before the final one (parts, items, events of a follow). */
  onReply?(r: VerifiedReply): void
  /** Keep listening after `done` (a follow's events continue its request's numbering). */
  keep?: boolean
  timeoutMs?: number
}

export class CallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

interface Pending {
  handlers: CallHandlers
  resolve(body: unknown): void
  reject(err: Error): void
  timer: ReturnType<typeof setTimeout> | undefined
  settled: boolean
  /** A `say` waiting on a human's approval may stay quiet until that approval's time runs out. */
  waiting: boolean
}

const CALL_TIMEOUT_MS = 10_000
const APPROVAL_WAIT_MS = 5 * 60_000

/**
 * One paired speaker: its own MQTT-over-WebSocket connection to the household broker, its key, the
 * verified requests it has asked this phone, its status and the refusals it counted. The device is
 * never a proxy: this talks to the broker as the phone's own broker user.
 */
export class SpeakerLink {
  readonly id: string
  readonly topics: Topics
  readonly me: PhoneIdentity
  state: LinkState = 'connecting'
  problem = ''
  status: SpeakerStatus | undefined
  readonly cards = new Map<string, Card>()
  readonly refusals = new Map<string, number>()
  #client: MqttClient | undefined
  #everConnected = false
  readonly #calls = new Map<string, Pending>()
  #seq = 0
  readonly #changed: (what: 'cards' | 'status' | 'link', link: SpeakerLink) => void
  readonly #now: () => number

  constructor(
    readonly speaker: Speaker,
    changed: (what: 'cards' | 'status' | 'link', link: SpeakerLink) => void,
    now: () => number = () => Date.now(),
  ) {
    this.#changed = changed
    this.#now = now
    this.id = speakerKey(speaker)
    this.topics = topicsFor(speaker.prefix, speaker.device)
    const key = fromBase64url(speaker.key) ?? new Uint8Array()
    this.me = { device: speaker.device, phone: speaker.phone, key }
  }

  /** Whether a phone's answer goes out now (otherwise it waits for the reconnection). */
  get connected(): boolean {
    return this.state === 'connected' && this.#client?.connected === true
  }

  /**
   * Connects with the password entered, or with none: many a household's broker (and the offline
   * demo's) takes a phone without one, so the app asks for it only once the broker refused.
   */
  connect(): void {
    if (!this.speaker.wsUrl) {
      this.#fail(
        'no-broker',
        `No broker address for ${this.speaker.name}: open the app from the speaker's own link, or pair again with a link that names the broker's WebSocket URL (ws://…).`,
      )
      return
    }
    this.state = 'connecting'
    const client = new MqttClient(this.speaker.wsUrl, {
      clientId: `nocturn-app-${this.speaker.phone}-${newNonce().slice(0, 10)}`,
      username: this.speaker.username,
      password: this.speaker.password || undefined,
      reconnectPeriod: 1000,
      connectTimeout: 8000,
      keepalive: 30,
    })
    this.#client = client
    client.on('connect', () => {
      this.#everConnected = true
      this.state = 'connected'
      this.problem = ''
      // A held answer goes out only after the outcomes are subscribed again: outcomes are not
      // retained, so one sent before the SUBACK could end its request while nobody here listens.
      client.subscribe(
        [
          this.topics.status,
          this.topics.requests,
          this.topics.outcomes,
          this.topics.conversationReply(this.speaker.phone),
        ],
        (err) => {
          if (!err) this.#sendHeld()
        },
      )
      this.#changed('link', this)
    })
    client.on('message', (topic, payload) => this.#onMessage(topic, payload))
    client.on('error', (err) => {
      // MQTT 3.1.1 CONNACK 4 and 5: the broker refused the login; retrying cannot help.
      if (err.code === 4 || err.code === 5) {
        client.end()
        const name = this.speaker.name
        const said = err.code === 4 ? 'wrong user name or password' : 'not allowed in'
        if (this.speaker.password) {
          this.#fail(
            'refused',
            `Your home's message hub refused the user name or password for ${name} (it said: ${said}). Enter this phone's password again under Speakers.`,
          )
        } else {
          this.#fail(
            'needs-login',
            `Your home's message hub wants this phone's password before it connects it to ${name} (it said: ${said}). Enter it under Speakers.`,
          )
        }
      }
    })
    client.on('offline', () => {
      if (this.state === 'refused') return
      this.state = this.#everConnected ? 'reconnecting' : 'unreachable'
      this.problem = `Cannot reach the broker at ${this.speaker.wsUrl}; retrying. Check that the broker is running and has its WebSocket listener on.`
      this.#changed('link', this)
    })
  }

  close(): void {
    this.#client?.end()
    this.#client = undefined
    for (const p of this.#calls.values()) if (p.timer) clearTimeout(p.timer)
    this.#calls.clear()
  }

  /** Pending cards: verified, not ended, not past their time. */
  pending(): Card[] {
    return [...this.cards.values()].filter((c) => !c.ended)
  }

  /** Marks cards whose time ran out; returns whether any changed. */
  expireDue(): boolean {
    let changed = false
    const now = this.#now()
    for (const c of this.cards.values()) {
      if (!c.ended && c.request.expiresAt <= now) {
        c.ended = { state: 'expired', local: true }
        c.endedAt = now
        changed = true
      }
      // Ended cards stay a minute from their ending so a person sees how it went, then leave:
      // counted from the request's expiry, an approved hour-long request's card stayed an hour.
      if (c.ended && now - (c.endedAt ?? now) > 60_000) {
        this.cards.delete(c.request.id)
        changed = true
      }
    }
    return changed
  }

  /**
   * Signs and sends this phone's answer to a verified request; `owner` is the owner's assertion a
   * critical yes carries (owner-credential.ts).
   */
  decide(id: string, decision: 'approve' | 'deny', grant: GrantForm, owner?: unknown): void {
    const card = this.cards.get(id)
    if (!card || card.ended || !this.#client) return
    const msg = JSON.stringify(
      decisionMessage(this.me, card.request, decision, grant, this.#now(), undefined, owner),
    )
    card.sent = decision
    card.problem = undefined
    card.answer = msg
    // Offline, the answer is held here and sent on reconnect (see `connect`); the card says so,
    // and says "sent" only once the broker has acknowledged it.
    if (this.connected) this.#publishDecision(card, msg)
    else {
      card.delivery = 'queued'
      card.held = msg
    }
    this.#changed('cards', this)
  }

  /** Takes the finished cards away at once (the person has read them). */
  clearEnded(): void {
    const ended = [...this.cards.values()].filter((c) => c.ended)
    for (const c of ended) this.cards.delete(c.request.id)
    if (ended.length > 0) this.#changed('cards', this)
  }

  /** A card's problem, said on it (nothing was sent). */
  sayOnCard(id: string, problem: string): void {
    const card = this.cards.get(id)
    if (!card) return
    card.problem = problem
    this.#changed('cards', this)
  }

  /**
   * Every held answer, even for a card whose time ran out here: the device's clock decides whether
   * its request has ended, and it refuses an answer that came too late.
   */
  #sendHeld(): void {
    for (const card of this.cards.values()) {
      if (card.held === undefined) continue
      const msg = card.held
      card.held = undefined
      this.#publishDecision(card, msg)
    }
  }

  #publishDecision(card: Card, msg: string): void {
    const client = this.#client
    if (!client) return
    client.publish(this.topics.decision(card.request.id), msg, (err) => {
      if (err) {
        card.sent = undefined
        card.delivery = undefined
        card.problem = 'Could not send your answer: the broker connection dropped. Try again.'
      } else card.delivery = 'delivered'
      this.#changed('cards', this)
    })
  }

  /** A signed conversation request; resolves with the `done` body, rejects on `error` or silence. */
  call(
    op: string,
    args: Record<string, unknown>,
    handlers: CallHandlers = {},
  ): {
    id: string
    done: Promise<unknown>
  } {
    const id = `app-${this.#now().toString(36)}-${(this.#seq++).toString(36)}`
    const msg = phoneRequestMessage(this.me, id, op, args, this.#now())
    const done = new Promise<unknown>((resolve, reject) => {
      const p: Pending = {
        handlers,
        resolve,
        reject,
        timer: undefined,
        settled: false,
        waiting: false,
      }
      this.#calls.set(id, p)
      this.#arm(id, p)
      const client = this.#client
      if (!client?.connected) {
        this.#settle(id, p, new CallError('offline', this.#offlineText()))
        return
      }
      client.publish(this.topics.conversationRequest(this.speaker.phone), JSON.stringify(msg))
    })
    return { id, done }
  }

  /** Stops listening for a kept call (a follow that was replaced). */
  forget(id: string): void {
    const p = this.#calls.get(id)
    if (p?.timer) clearTimeout(p.timer)
    this.#calls.delete(id)
  }

  #offlineText(): string {
    return `${this.speaker.name} is not connected to the broker right now; try again when it shows Online.`
  }

  #arm(id: string, p: Pending): void {
    if (p.timer) clearTimeout(p.timer)
    if (p.settled) return
    const ms = p.waiting ? APPROVAL_WAIT_MS : (p.handlers.timeoutMs ?? CALL_TIMEOUT_MS)
    p.timer = setTimeout(() => {
      this.#settle(
        id,
        p,
        new CallError(
          'timeout',
          `${this.speaker.name} did not answer within ${Math.round(ms / 1000)} s. Check that the speaker is switched on and connected to the same broker.`,
        ),
      )
    }, ms)
  }

  #settle(id: string, p: Pending, result: Error | { body: unknown }): void {
    if (p.timer) clearTimeout(p.timer)
    p.timer = undefined
    if (!p.settled) {
      p.settled = true
      if (result instanceof Error) p.reject(result)
      else p.resolve(result.body)
    }
    if (!p.handlers.keep || result instanceof Error) this.#calls.delete(id)
  }

  #refuse(reason: string): void {
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1)
    this.#changed('status', this)
  }

  #fail(state: LinkState, problem: string): void {
    this.state = state
    this.problem = problem
    this.#changed('link', this)
  }

  #onMessage(topic: string, payload: Uint8Array): void {
    if (topic === this.topics.status) {
      const s = parseJsonObject(payload)
      if (s.ok && typeof s.value.online === 'boolean' && typeof s.value.state === 'string') {
        const { muted, volume, sensitivity } = s.value
        const providers = parseProviders(s.value.providers)
        const wakeCheck = parseWakeCheck(s.value.wakeCheck)
        this.status = {
          online: s.value.online,
          state: s.value.state,
          muted: typeof muted === 'boolean' ? muted : null,
          ...(Number.isInteger(volume) &&
            (volume as number) >= 0 &&
            (volume as number) <= 100 && { volume: volume as number }),
          ...(isSensitivity(sensitivity) && { sensitivity }),
          ...(providers && { providers }),
          ...(wakeCheck && { wakeCheck }),
        }
        this.#changed('status', this)
      }
      return
    }
    if (topic === this.topics.conversationReply(this.speaker.phone)) {
      this.#onReply(payload)
      return
    }
    const where = parseApprovalTopic(this.topics, topic)
    if (!where) return
    if (where.kind === 'request') this.#onRequest(where.id, payload)
    else if (where.kind === 'outcome') this.#onOutcome(where.id, payload)
  }

  #onRequest(id: string, payload: Uint8Array): void {
    // An empty retained payload is unsigned: it ends nothing. The signed outcome or the clock does.
    if (payload.byteLength === 0) return
    const had = this.cards.get(id)
    const r = verifyRequest(this.me, id, payload, this.#now())
    if (!r.ok) {
      this.#refuse(r.reason)
      return
    }
    if (had && had.request.digest === r.value.digest) {
      // The speaker published it again (it reconnected) and still waits: the answer the broker
      // took never reached it, e.g. the broker restarted before the speaker was back. A copy that
      // did reach it is refused there as a replay, so sending again grants nothing twice.
      if (had.answer && had.delivery === 'delivered' && !had.ended && this.connected) {
        this.#publishDecision(had, had.answer)
      }
      return
    }
    this.cards.set(id, { speaker: this.id, request: r.value, shownAt: this.#now() })
    this.#changed('cards', this)
  }

  /**
   * The speaker refused this phone's yes at the owner's check and said so (the request still
   * waits): the answer is forgotten, so the card offers Approve and Deny again with the reason.
   */
  #yesRefused(card: Card, body: unknown): void {
    if (card.ended || card.sent !== 'approve') return
    const { reason } = (body ?? {}) as { reason?: unknown }
    card.sent = undefined
    card.delivery = undefined
    card.answer = undefined
    card.held = undefined
    card.problem = ownerRefusedWords(reason, this.speaker.name)
    this.#changed('cards', this)
  }

  #onOutcome(id: string, payload: Uint8Array): void {
    const card = this.cards.get(id)
    if (!card) return
    if (card.ended && !('local' in card.ended)) return
    const r = verifyOutcome(this.me, id, card.request.digest, payload)
    if (!r.ok) {
      this.#refuse(`outcome ${r.reason}`)
      return
    }
    card.ended = r.value
    card.endedAt = this.#now()
    this.#changed('cards', this)
  }

  #onReply(payload: Uint8Array): void {
    const r = verifyReply(this.me, payload)
    if (!r.ok) {
      this.#refuse(r.reason)
      return
    }
    const reply = r.value
    const card = this.cards.get(reply.re)
    if (card && reply.kind === 'error') {
      // Only the owner's check answers a card's id with an error; anything else is not ours.
      if ((reply.body as { code?: unknown } | undefined)?.code === OWNER_REFUSED_CODE) {
        this.#yesRefused(card, reply.body)
      }
      return
    }
    const p = this.#calls.get(reply.re)
    if (!p) return
    if (reply.kind === 'done') {
      this.#settle(reply.re, p, { body: reply.body })
      return
    }
    if (reply.kind === 'error') {
      const b = (reply.body ?? {}) as { code?: string; message?: string }
      this.#settle(
        reply.re,
        p,
        new CallError(b.code ?? 'error', b.message ?? 'The speaker refused the request.'),
      )
      return
    }
    if (reply.kind === 'pending') p.waiting = true
    if (!p.settled) this.#arm(reply.re, p)
    p.handlers.onReply?.(reply)
  }
}

/** The status's `wakeCheck`, or undefined when it is absent or not one. */
function parseWakeCheck(v: unknown): WakeCheckState | undefined {
  if (v === null || typeof v !== 'object') return undefined
  const { state, streak, of } = v as Record<string, unknown>
  if (state !== 'off' && state !== 'shadow' && state !== 'on' && state !== 'earned')
    return undefined
  const count = (n: unknown) =>
    Number.isInteger(n) && (n as number) >= 0 ? (n as number) : undefined
  const s = count(streak)
  const o = count(of)
  return { state, ...(s !== undefined && { streak: s }), ...(o !== undefined && { of: o }) }
}
