import { Backoff, type BackoffPolicy } from '../core/backoff.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { TimerHandle } from '../ports/clock.js'
import type { LiveCloseInfo, LiveEvents, LiveSession, LiveSetup } from '../ports/live-llm.js'
import type { VoiceSessionDeps } from './session-types.js'

export interface Connection {
  /** 1, 2, … in the order opened. */
  readonly n: number
  /** A resumed connection keeps its lineage; a fresh one starts a new one. */
  readonly lineage: number
  session?: LiveSession
  /** Open and current: audio and answers go here. */
  live: boolean
  /** Closed or abandoned by us: anything it still reports is ignored. */
  retired: boolean
}

/** A connection that is open and current. */
interface OpenConnection extends Connection {
  readonly session: LiveSession
}

/** What the keeper reports; the call ledger, the transcript and the uplink react. */
interface ConnectionListener {
  /**
   * A connection is open and current. `resumedFromHandle`: it resumed its lineage from the
   * handle that was the n-th to arrive (calls made after that handle are unknown to it).
   */
  opened(conn: OpenConnection, resumedFromHandle: number | undefined): void
  /**
   * The lineage cannot be resumed; a fresh one is about to open and will read the history from
   * the store (so whatever is certain must be written now, before this returns).
   */
  lineageLost(lineage: number): void
  /** A connection stopped being current (closed by either side, or given up). */
  closed(conn: Connection): void
  /** A resumable handle arrived; `seq` counts them. */
  handle(seq: number): void
}

export interface ConnectionKeeperDeps
  extends Pick<VoiceSessionDeps, 'llm' | 'tools' | 'persona' | 'store' | 'clock' | 'options'> {
  readonly conversationId: string
  readonly log: Logger
  readonly listener: ConnectionListener
  /** The provider events of one connection (the session wires them). */
  events(conn: Connection): LiveEvents
  /** A turn is under way: a resumption after `goAway` waits for its end. */
  inTurn(): boolean
  /** True once the session has started ending. */
  ending(): boolean
  /** No connection could be had: the session ends in error. */
  fail(): void
}

/**
 * Between fresh attempts to reach the provider: 1 s, 2 s, 3 s, … (linear: a handful of attempts
 * in all, each wait long enough for a blip to pass, none so long that the person gives up).
 */
const RECONNECT_BACKOFF: BackoffPolicy = {
  initialMs: 1000,
  factor: 1,
  stepMs: 1000,
  maxMs: Number.POSITIVE_INFINITY,
}

/**
 * The session's provider connections (docs/voice-driver.md, rule 10): opens them, resumes across
 * `goAway` and drops with the last resumable handle, falls back to fresh ones, each starting a new
 * lineage. It only keeps connections and reports what happened to its listener; what that means
 * for calls, answers, the transcript and the microphone is decided by those who listen.
 */
export class ConnectionKeeper {
  readonly #deps: ConnectionKeeperDeps
  readonly #log: Logger
  #conn: Connection | undefined
  #opening: Connection | undefined
  #connections = 0
  #lineage = 0
  #handle: string | undefined
  /** Resumable handles received so far; the last one is `#handle`. */
  #handleSeq = 0
  #reconnecting = false
  #resumeAfterTurn = false
  #resumeTimer: TimerHandle | undefined
  #resumptions = 0
  #fresh = 0

  constructor(deps: ConnectionKeeperDeps) {
    this.#deps = deps
    this.#log = deps.log
  }

  /** The open, current connection's session: audio and answers go here. */
  get liveSession(): LiveSession | undefined {
    return this.#conn?.live ? this.#conn.session : undefined
  }

  get reconnecting(): boolean {
    return this.#reconnecting
  }

  get resumptions(): number {
    return this.#resumptions
  }

  get freshConnections(): number {
    return this.#fresh
  }

  // ---- opening --------------------------------------------------------------------------

  async connect(kind: 'resume' | 'fresh'): Promise<boolean> {
    const { llm, tools, persona, store } = this.#deps
    const resumeHandle = kind === 'resume' ? this.#handle : undefined
    // Which handle this resumes from: calls made after it are unknown to the resumed session.
    const resumedFrom = resumeHandle ? this.#handleSeq : undefined
    if (kind === 'fresh') this.#startLineage()
    const conn: Connection = {
      n: ++this.#connections,
      lineage: this.#lineage,
      live: false,
      retired: false,
    }
    const setup: LiveSetup = {
      persona,
      tools: tools.declarations(),
      nonBlockingTools: llm.capabilities.asyncToolCalls,
      // A resumed connection has the history already; re-sending it would duplicate it.
      history: resumeHandle ? undefined : store.messages(this.#deps.conversationId),
      resumeHandle,
    }
    this.#opening = conn
    let session: LiveSession
    try {
      session = await llm.open(setup, this.#deps.events(conn))
    } catch (err) {
      if (this.#opening === conn) this.#opening = undefined
      conn.retired = true
      this.#log.warn(
        { event: 'voice_connection_failed', connection: conn.n, kind, err: errorText(err) },
        'voice connection failed',
      )
      return false
    }
    if (this.#opening === conn) this.#opening = undefined
    conn.session = session
    if (this.#deps.ending() || conn.retired) {
      conn.retired = true
      await this.closeQuietly(conn)
      return false
    }
    conn.live = true
    this.#conn = conn
    this.#log.info(
      {
        event: kind === 'resume' ? 'connection_resumed' : 'connection_opened',
        connection: conn.n,
        lineage: conn.lineage,
        kind,
        history: setup.history?.length ?? 0,
      },
      kind === 'resume' ? 'voice connection resumed' : 'voice connection opened',
    )
    this.#deps.listener.opened(conn as OpenConnection, resumedFrom)
    return true
  }

  /** A fresh connection is a new model that never saw the old lineage. */
  #startLineage(): void {
    const lost = this.#lineage
    this.#handle = undefined
    this.#lineage++
    if (lost > 0) this.#deps.listener.lineageLost(lost)
  }

  // ---- goAway, drops and resumption ------------------------------------------------------

  onGoAway(timeLeftMs: number | undefined): void {
    const canResume = this.#deps.llm.capabilities.resumption && this.#handle !== undefined
    this.#log.info({ event: 'go_away', timeLeftMs, resume: canResume }, 'voice goAway')
    if (!canResume || this.#reconnecting) return
    // Resuming mid-reply cuts the reply off: wait for the end of the turn, but not past the cut.
    // Between turns it is safe at once (what is already in the speaker plays on regardless).
    if (!this.#deps.inTurn()) {
      void this.#reconnect('goAway')
      return
    }
    this.#resumeAfterTurn = true
    // No readable time left (a malformed goAway): wait for the end of the turn, or the close.
    // Taking it as "now" would cut the reply and lose the frames still on their way to us.
    if (timeLeftMs === undefined) return
    const wait = Math.max(0, timeLeftMs - this.#deps.options.goAwayMarginMs)
    if (this.#resumeTimer) this.#deps.clock.clearTimeout(this.#resumeTimer)
    this.#resumeTimer = this.#deps.clock.setTimeout(() => {
      this.#resumeTimer = undefined
      void this.#reconnect('goAway, before the cut')
    }, wait)
  }

  /** The turn ended: a resumption put off by `goAway` happens now. */
  turnEnded(): void {
    if (this.#resumeAfterTurn) void this.#reconnect('goAway, at the end of the turn')
  }

  onResumption(handle: string | undefined, resumable: boolean): void {
    // Keep the last handle that can be resumed; an update saying "not now" does not erase it.
    if (resumable && typeof handle === 'string' && handle !== '') {
      this.#handle = handle
      this.#handleSeq++
      this.#deps.listener.handle(this.#handleSeq)
    }
  }

  onClosed(conn: Connection, info: LiveCloseInfo): void {
    if (conn.retired || info.byClient) return
    this.#retire(conn)
    if (this.#opening === conn) this.#opening = undefined
    this.#log.warn(
      { event: 'voice_connection_lost', connection: conn.n, code: info.code, reason: info.reason },
      'voice connection lost',
    )
    if (!this.#deps.ending()) void this.#reconnect(`closed ${info.code}`)
  }

  async #reconnect(why: string): Promise<void> {
    if (this.#reconnecting || this.#deps.ending()) return
    this.#reconnecting = true
    this.#resumeAfterTurn = false
    if (this.#resumeTimer) this.#deps.clock.clearTimeout(this.#resumeTimer)
    this.#resumeTimer = undefined
    const old = this.#conn
    try {
      if (old) {
        this.#retire(old)
        // The provider refuses a resumption while the old socket is open: close it first.
        await this.closeQuietly(old)
      }
      const canResume = this.#deps.llm.capabilities.resumption && this.#handle !== undefined
      this.#log.info({ why, resume: canResume }, 'voice reconnecting')
      if (canResume) {
        if (await this.connect('resume')) {
          this.#resumptions++
          return
        }
        this.#log.warn(
          { event: 'voice_resumption_failed', why },
          'voice resumption failed: opening a fresh connection',
        )
      }
      const backoff = new Backoff({
        ...RECONNECT_BACKOFF,
        giveUpAfter: this.#deps.options.maxReconnectAttempts,
      })
      while (!this.#deps.ending() && !backoff.exhausted) {
        if (await this.connect('fresh')) {
          this.#fresh++
          return
        }
        const wait = backoff.next()
        // No wait after the last attempt: that would only delay the error.
        if (backoff.exhausted) break
        await this.#sleep(wait)
      }
      if (this.#deps.ending()) return
      this.#log.error({ event: 'voice_reconnect_failed', why }, 'voice could not reconnect')
      this.#deps.fail()
    } finally {
      this.#reconnecting = false
    }
  }

  // ---- ending ---------------------------------------------------------------------------

  /** A resumption put off by `goAway` will not happen. */
  cancelResume(): void {
    if (this.#resumeTimer) this.#deps.clock.clearTimeout(this.#resumeTimer)
  }

  /**
   * At session end: nothing more is sent or heard. Returns the connections (open or opening) for
   * the caller to close.
   */
  retireAll(): Connection[] {
    const conns = [this.#conn, this.#opening].filter((c): c is Connection => c !== undefined)
    this.#opening = undefined
    for (const c of conns) this.#retire(c)
    return conns
  }

  async closeQuietly(conn: Connection): Promise<void> {
    try {
      await conn.session?.close()
    } catch (err) {
      this.#log.warn(
        { event: 'voice_close_failed', connection: conn.n, err: errorText(err) },
        'voice close failed',
      )
    }
  }

  #retire(conn: Connection): void {
    const wasCurrent = this.#conn === conn
    conn.live = false
    conn.retired = true
    if (wasCurrent) {
      this.#conn = undefined
      this.#deps.listener.closed(conn)
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((r) => this.#deps.clock.setTimeout(r, ms))
  }
}
