import { BoundedMap } from '../../core/bounded-map.js'
import { DEFAULT_WAKE_WINDOW_MS } from '../../core/defaults.js'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import { type Clock, monotonicNow, type TimerHandle } from '../../ports/clock.js'
import type { WakeArbiter } from '../../ports/wake-arbiter.js'
import type { WakeDetection } from '../../ports/wake-word.js'
import {
  claimNumbers,
  DEFAULT_PREFIX,
  MAX_CLAIM_BYTES,
  newNonce,
  outranks,
  PROTOCOL_VERSION,
  parsePayload,
  type WakeClaim,
  wakeClaimSchema,
  wakeTopic,
} from '../../protocol/index.js'
import { ClaimWindow } from './claim-window.js'
import type { MqttConnection } from './connection.js'
import { HouseholdPresence } from './household-presence.js'
import { RejectionLog } from './rejection-log.js'

export interface MqttWakeArbiterOptions {
  readonly connection: MqttConnection
  readonly deviceId: string
  readonly prefix?: string
  readonly logger: Logger
  /** Its monotonic reading times the rounds; its wall time only goes into the claim's `at`. */
  readonly clock: Clock
  /**
   * The longest a claim waits for a better one (a loser learns sooner). The window itself is
   * measured below it (ClaimWindow), and no wait at all when no other speaker is online.
   */
  readonly windowMs?: number
  /** The shortest the measured window may be (30 ms if unset); `windowMs` fixes it. */
  readonly minWindowMs?: number
  /**
   * After a round closes, a wake heard within this long is the same words heard late, and yields:
   * the round's winner is already answering. Covers how much later one speaker's detector may fire
   * than another's on the same words (up to ~0.5 s measured: ../docs/protocol.md).
   */
  readonly settleMs?: number
  /** Each ignored claim's reason, after it was logged (the device's state counts them). */
  readonly onRefused?: (reason: Rejection) => void
}

type Rejection = 'oversized' | 'malformed-json' | 'invalid-payload' | 'retained' | 'own-device'

/** Why a claim ended as it did (the `reason` of the `wake_arbitrated` line). */
type Outcome =
  | 'answering'
  | 'alone'
  | 'only'
  | 'unsent'
  | 'best'
  | 'outranked'
  | 'late'
  | 'taken'
  | 'aborted'
  | 'closed'

/** The claims heard for one utterance, from the first one this speaker knew of, for one window. */
interface Round {
  /** Monotonic ms: the first claim's receipt (or this speaker's own claim). */
  readonly openedAt: number
  /** The window of the claim that opened it (its sender's): every speaker times the round so. */
  readonly windowMs: number
  /** Monotonic ms: `openedAt` plus the window. */
  readonly closesAt: number
  /** The best claim of another speaker heard in it so far. */
  best: WakeClaim | undefined
}

interface Pending {
  readonly claim: WakeClaim
  readonly round: Round
  settle(won: boolean, outcome: Outcome, by?: WakeClaim): void
}

/** Most households have a handful of speakers; a claim is matched to its echo among these. */
const REMEMBERED_CLAIMS = 32
const DEFAULT_SETTLE_MS = 1000
/** A claim's echo not back this long after its send was not delivered (`#unheard`). */
const ECHO_GRACE_MS = 2000

/**
 * The WakeArbiter over the household's broker. Every speaker that wakes publishes a claim on
 * `<prefix>/wake` (QoS 0, never retained) and hears everyone's. Claims are grouped into rounds by
 * when this speaker received them, never by the senders' clocks: a round opens with the first
 * claim heard (or made) and lasts one window. The claim that outranks every other of its round
 * wins at the window's end; any other loses the moment it hears a better one. A speaker that wakes
 * too late to be heard within the round, or just after it, yields without claiming: the round's
 * winner is already answering. Without a broker (or without its subscription in place) a claim
 * wins at once. See docs/protocol.md, "Several speakers in one home".
 */
export class MqttWakeArbiter implements WakeArbiter {
  readonly #conn: MqttConnection
  readonly #deviceId: string
  readonly #topic: string
  readonly #log: Logger
  readonly #clock: Clock
  /** Measured from the broker's round trips and the rounds' spreads, at most the configured one. */
  readonly #window: ClaimWindow
  /** Who else could claim: the other speakers' retained statuses. */
  readonly #presence: HouseholdPresence
  readonly #settleMs: number
  readonly #rejections: RejectionLog<Rejection>
  /** This speaker's recent claim ids: when each was sent, and whether the broker handed it back. */
  readonly #sent = new BoundedMap<string, { at: number; heard: boolean }>(REMEMBERED_CLAIMS)
  readonly #pending = new Set<Pending>()
  #round: Round | undefined
  /** Subscribed on the current connection: only then does this speaker hear the others. */
  #listening = false
  #connections = 0
  #closed = false

  constructor(options: MqttWakeArbiterOptions) {
    const windowMs = options.windowMs ?? DEFAULT_WAKE_WINDOW_MS
    if (!(windowMs > 0 && windowMs <= 2000)) {
      throw new Error(`wake window must be 1–2000 ms, got ${windowMs}`)
    }
    this.#conn = options.connection
    this.#deviceId = options.deviceId
    const prefix = options.prefix ?? DEFAULT_PREFIX
    this.#topic = wakeTopic(prefix)
    this.#presence = new HouseholdPresence(prefix, options.deviceId)
    this.#log = options.logger.child({ component: 'wake-arbiter', device: options.deviceId })
    this.#clock = options.clock
    this.#window = new ClaimWindow(windowMs, options.minWindowMs)
    this.#settleMs = options.settleMs ?? DEFAULT_SETTLE_MS
    this.#rejections = new RejectionLog(this.#log, 'wake claim ignored', options.clock, {
      ...(options.onRefused && { counted: options.onRefused }),
    })
    this.#conn.onConnect(() => this.#subscribe())
    this.#conn.onDisconnect(() => {
      this.#listening = false
    })
    this.#conn.onMessage((topic, payload, retained) => {
      if (this.#closed) return
      if (topic === this.#topic) this.#receive(payload, retained)
      else this.#presence.receive(topic, payload)
    })
  }

  claim(detection: WakeDetection, signal?: AbortSignal): Promise<boolean> {
    // Claims already in the socket are read first (the poll phase runs before setImmediate's): on
    // a busy board the event loop runs late, and a claim that came in meanwhile belongs to what
    // this speaker knows when it decides whether, and how, to claim.
    return new Promise((resolve) => setImmediate(() => resolve(this.#claim(detection, signal))))
  }

  #claim(detection: WakeDetection, signal?: AbortSignal): Promise<boolean> {
    const numbers = claimNumbers(detection.levelDb, detection.score)
    const fields = { phrase: detection.phrase, ...numbers }
    if (signal?.aborted) return Promise.resolve(this.#decided(false, 'aborted', fields))
    if (this.#closed) return Promise.resolve(this.#decided(false, 'closed', fields))
    if (!this.#listening || !this.#conn.connected) {
      return Promise.resolve(this.#decided(true, 'alone', fields))
    }
    const now = monotonicNow(this.#clock)
    const current = this.#current(now)
    if (current === 'settling') return Promise.resolve(this.#decided(false, 'taken', fields))
    // This speaker woke after the round opened: how far apart the speakers' detectors fire.
    if (current) this.#window.spread(now - current.openedAt)
    const windowMs = current?.windowMs ?? this.#window.ms
    const claim: WakeClaim = {
      v: PROTOCOL_VERSION,
      device: this.#deviceId,
      id: newNonce(),
      ...numbers,
      at: this.#clock.now(),
      window: windowMs,
    }
    if (!current && this.#presence.alone) {
      // No other speaker of the household is online to claim it: answer now. The claim still
      // goes out, for a speaker whose status has not reached this one yet (it yields to it).
      this.#tell(claim)
      return Promise.resolve(this.#decided(true, 'only', fields))
    }
    // A speaker joining a round needs its claim to reach the others before their windows end;
    // their rounds opened up to one broker hop apart from ours, and ours reaches them one hop
    // later: half the window covers two hops of up to a quarter of it each.
    if (current && current.closesAt - now < current.windowMs / 2) {
      return Promise.resolve(this.#decided(false, 'late', fields, current.best))
    }
    if (current?.best && outranks(current.best, claim)) {
      return Promise.resolve(this.#decided(false, 'outranked', fields, current.best))
    }
    const round: Round = current ?? {
      openedAt: now,
      windowMs,
      closesAt: now + windowMs,
      best: undefined,
    }
    this.#round = round
    return new Promise<boolean>((resolve) => {
      let timer: TimerHandle | undefined
      const onAbort = () => pending.settle(false, 'aborted')
      const pending: Pending = {
        claim,
        round,
        settle: (won, outcome, by) => {
          if (!this.#pending.delete(pending)) return
          if (timer) this.#clock.clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          const waited = monotonicNow(this.#clock) - now
          resolve(this.#decided(won, outcome, { ...fields, windowMs: round.windowMs }, by, waited))
        },
      }
      this.#pending.add(pending)
      signal?.addEventListener('abort', onAbort, { once: true })
      timer = this.#clock.setTimeout(
        () => {
          timer = undefined
          // Likewise at the end: a late timer fires before the loop reads its sockets, and a
          // better claim that arrived within the window may be waiting there.
          setImmediate(() => {
            if (!this.#pending.has(pending)) return
            pending.settle(true, 'best')
          })
        },
        Math.max(0, round.closesAt - now),
      )
      this.#send(claim, pending)
    })
  }

  answering(detection: WakeDetection): void {
    const numbers = claimNumbers(detection.levelDb, detection.score)
    const fields = { phrase: detection.phrase, ...numbers }
    if (this.#closed) return
    if (!this.#listening || !this.#conn.connected) {
      this.#decided(true, 'alone', fields)
      return
    }
    // Taken already (the session's speaker has dropped its reply): the claim outranks any that
    // is not answering, so another speaker that heard the same words yields to it.
    this.#tell({
      v: PROTOCOL_VERSION,
      device: this.#deviceId,
      id: newNonce(),
      ...numbers,
      at: this.#clock.now(),
      window: this.#window.ms,
      answering: true,
    })
    this.#decided(true, 'answering', fields)
  }

  /** Publishes a claim nothing here waits on; its echo is still looked for (a broker that drops claims). */
  #tell(claim: WakeClaim): void {
    this.#send(claim, undefined)
  }

  /**
   * Over QoS 0 the broker cannot say it refused a claim; its echo never coming back is how this
   * speaker learns that the others did not hear it either. Looked for ECHO_GRACE_MS after the
   * send, not at the window's end: a busy board reads its socket late, and an echo after the
   * window is a slow round trip (it widens the window), not a broker that dropped the claim.
   */
  #unheard(claim: WakeClaim): void {
    if (this.#sent.get(claim.id)?.heard !== false) return
    this.#log.warn(
      { event: 'wake_claim_unheard', topic: this.#topic },
      'the broker did not deliver this wake claim (does its ACL let the device write and read the wake topic?): answering, and another speaker may answer too',
    )
  }

  /** Publishes `claim`; a failure answers `pending` alone, or is only logged when nothing waits. */
  #send(claim: WakeClaim, pending: Pending | undefined): void {
    this.#sent.set(claim.id, { at: monotonicNow(this.#clock), heard: false })
    this.#clock.setTimeout(
      () => setImmediate(() => this.#closed || this.#unheard(claim)),
      Math.max(this.#window.ms, ECHO_GRACE_MS),
    )
    this.#conn.publish(this.#topic, JSON.stringify(claim), { qos: 0 }).catch((err: unknown) => {
      this.#log.warn(
        { event: 'wake_claim_not_sent', err: errorText(err) },
        pending ? 'wake claim not sent: answering alone' : 'wake claim not sent',
      )
      pending?.settle(true, 'unsent')
    })
  }

  async close(): Promise<void> {
    this.#closed = true
    for (const p of [...this.#pending]) p.settle(false, 'closed')
    this.#rejections.flush()
  }

  #subscribe(): void {
    this.#listening = false
    this.#presence.forget()
    const connection = ++this.#connections
    const asked = monotonicNow(this.#clock)
    // The statuses first, in the same turn: the broker answers subscriptions in order, and sends a
    // subscription's retained messages before it answers the next one, so by the time the wake
    // topic is heard every speaker's status has been read.
    const statuses = this.#conn.subscribe([this.#presence.filter]).then(
      () => {
        this.#window.hop(monotonicNow(this.#clock) - asked)
        return true
      },
      (err: unknown) => {
        this.#log.warn(
          { event: 'wake_presence_unknown', topic: this.#presence.filter, err: errorText(err) },
          'not reading the other speakers’ statuses: every wake waits out the claim window',
        )
        return false
      },
    )
    this.#conn.subscribe([this.#topic]).then(
      async () => {
        const read = await statuses
        if (connection !== this.#connections || !this.#conn.connected) return
        if (read) this.#presence.read()
        this.#listening = true
      },
      (err: unknown) =>
        this.#log.warn(
          { event: 'wake_subscribe_failed', topic: this.#topic, err: errorText(err) },
          'not hearing the other speakers: every wake is answered here alone',
        ),
    )
  }

  /** The round open at `now`, `settling` just after one closed, or undefined. */
  #current(now: number): Round | 'settling' | undefined {
    const r = this.#round
    if (!r) return undefined
    if (now < r.closesAt) return r
    if (now < r.closesAt + this.#settleMs) return 'settling'
    return undefined
  }

  #receive(payload: Buffer, retained: boolean): void {
    // Empty is what clearing a retained message looks like: nothing to say about it.
    if (payload.byteLength === 0) return
    const claim = readClaim(payload, retained, this.#rejections)
    if (!claim) return
    const now = monotonicNow(this.#clock)
    if (claim.device === this.#deviceId) {
      const sent = this.#sent.get(claim.id)
      if (sent && !sent.heard) {
        this.#sent.set(claim.id, { ...sent, heard: true })
        this.#window.hop(now - sent.at)
      } else if (!sent) {
        this.#rejections.add('own-device', { event: 'wake_claim_ignored', claimId: claim.id })
      }
      return
    }
    const current = this.#current(now)
    if (current === 'settling') {
      // Its sender missed the round this speaker saw (it was reconnecting, say): nothing waits on it.
      this.#log.debug({ from: claim.device }, 'wake claim after its round: ignored')
      return
    }
    if (!current) {
      const windowMs = claim.window ?? DEFAULT_WAKE_WINDOW_MS
      this.#round = { openedAt: now, windowMs, closesAt: now + windowMs, best: claim }
      this.#log.debug({ from: claim.device, level: claim.level }, 'wake claim opened a round')
      return
    }
    this.#window.spread(now - current.openedAt)
    if (!current.best || outranks(claim, current.best)) current.best = claim
    for (const p of [...this.#pending]) {
      if (p.round === current && outranks(claim, p.claim)) p.settle(false, 'outranked', claim)
    }
  }

  #decided(
    won: boolean,
    outcome: Outcome,
    fields: Record<string, unknown>,
    by?: WakeClaim,
    waitedMs = 0,
  ): boolean {
    this.#log.info(
      {
        event: 'wake_arbitrated',
        won,
        reason: outcome,
        ...fields,
        ...(by && { by: by.device, byLevel: by.level, byScore: by.score }),
        waitedMs: Math.round(waitedMs * 10) / 10,
      },
      won ? 'wake answered here' : 'another speaker answers this wake',
    )
    return won
  }
}

/** The claim in `payload`, or undefined once the reason it is not one has been logged. */
function readClaim(
  payload: Buffer,
  retained: boolean,
  rejections: RejectionLog<Rejection>,
): WakeClaim | undefined {
  // A retained claim would greet every speaker that (re)connects, long after any wake.
  if (retained) {
    rejections.add('retained', { event: 'wake_claim_ignored' })
    return undefined
  }
  if (payload.byteLength > MAX_CLAIM_BYTES) {
    rejections.add('oversized', { event: 'wake_claim_ignored', bytes: payload.byteLength })
    return undefined
  }
  const parsed = parsePayload(wakeClaimSchema, payload)
  if (parsed.ok) return parsed.value
  rejections.add(parsed.reason, {
    event: 'wake_claim_ignored',
    ...(parsed.detail !== undefined && { detail: parsed.detail }),
  })
  return undefined
}
