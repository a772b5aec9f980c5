import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { TimerHandle } from '../ports/clock.js'
import type {
  LiveCloseInfo,
  LiveEvents,
  LiveSession,
  LiveSetup,
  LiveToolResponse,
} from '../ports/live-llm.js'
import { AnswerOutbox } from './answer-outbox.js'
import type { CallRegistry, LiveCall, WithdrawReason } from './call-registry.js'
import type { MicUplink } from './mic-uplink.js'
import type { SessionHooks, VoiceSessionDeps } from './session-types.js'
import type { TranscriptAssembler } from './transcript-assembler.js'
import type { TurnCounter } from './turn-counter.js'

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

export interface ConnectionKeeperDeps
  extends Pick<VoiceSessionDeps, 'llm' | 'tools' | 'persona' | 'store' | 'clock' | 'options'> {
  readonly conversationId: string
  readonly log: Logger
  readonly hooks: SessionHooks
  readonly calls: CallRegistry
  readonly turns: TurnCounter
  readonly transcript: TranscriptAssembler
  /** Told when a connection opens: the audio kept in the gap goes first. */
  readonly uplink: MicUplink
  /** The provider events of one connection (the session wires them). */
  events(conn: Connection): LiveEvents
  withdraw(id: string, reason: WithdrawReason): void
  /** True once the session has started ending. */
  ending(): boolean
  /** No connection could be had: the session ends in error. */
  fail(): void
}

/**
 * The session's provider connections (DESIGN §2.10): opens them, resumes across `goAway` and
 * drops with the last resumable handle, falls back to fresh ones; a fresh one starts a new lineage,
 * whose calls and answers never cross to another.
 */
export class ConnectionKeeper {
  readonly #d: ConnectionKeeperDeps
  readonly #log: Logger
  #conn?: Connection
  #opening?: Connection
  #connections = 0
  #lineage = 0
  #handle?: string
  /** Resumable handles received so far; the last one is `#handle`. */
  #handleSeq = 0
  readonly #outbox: AnswerOutbox
  #reconnecting = false
  #resumeAfterTurn = false
  #resumeTimer?: TimerHandle
  #resumptions = 0
  #fresh = 0

  constructor(deps: ConnectionKeeperDeps) {
    this.#d = deps
    this.#log = deps.log
    this.#outbox = new AnswerOutbox({
      log: deps.log,
      live: () => (this.#conn?.live ? this.#conn : undefined),
      lineage: () => this.#lineage,
    })
  }

  /** The open, current connection's session: audio and answers go here. */
  get liveSession(): LiveSession | undefined {
    return this.#conn?.live ? this.#conn.session : undefined
  }

  get reconnecting(): boolean {
    return this.#reconnecting
  }

  get handleSeq(): number {
    return this.#handleSeq
  }

  get resumptions(): number {
    return this.#resumptions
  }

  get freshConnections(): number {
    return this.#fresh
  }

  /** Sends an answer on a connection of the call's lineage, or keeps it for the resumption. */
  send(call: LiveCall, response: LiveToolResponse): void {
    this.#outbox.send(call, response)
  }

  /** A withdrawn call: an answer still queued for it must not go out. */
  unqueue(callId: string): void {
    this.#outbox.remove(new Set([callId]))
  }

  // ---- opening --------------------------------------------------------------------------

  async connect(kind: 'resume' | 'fresh'): Promise<boolean> {
    const { llm, tools, persona, store } = this.#d
    const resumeHandle = kind === 'resume' ? this.#handle : undefined
    // Which handle this resumes from: calls made after it are unknown to the resumed session.
    const resumedFrom = this.#handleSeq
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
      history: resumeHandle ? undefined : store.messages(this.#d.conversationId),
      resumeHandle,
    }
    this.#opening = conn
    let session: LiveSession
    try {
      session = await llm.open(setup, this.#d.events(conn))
    } catch (err) {
      if (this.#opening === conn) this.#opening = undefined
      conn.retired = true
      this.#log.warn({ connection: conn.n, kind, err: errorText(err) }, 'voice connection failed')
      return false
    }
    if (this.#opening === conn) this.#opening = undefined
    conn.session = session
    if (this.#d.ending() || conn.retired) {
      conn.retired = true
      await this.closeQuietly(conn)
      return false
    }
    conn.live = true
    this.#conn = conn
    this.#d.uplink.opened()
    if (resumeHandle) this.#forgetCallsAfter(resumedFrom, conn.n)
    this.#log.info(
      { connection: conn.n, lineage: conn.lineage, kind, history: setup.history?.length ?? 0 },
      kind === 'resume' ? 'voice connection resumed' : 'voice connection opened',
    )
    this.#outbox.deliver(conn)
    this.#d.uplink.flushGap(session)
    this.#d.hooks.changed()
    return true
  }

  /**
   * A fresh connection is a new model that never saw the old calls: they are withdrawn (their
   * approvals taken off the phones) and nothing of theirs is ever sent on the new one.
   */
  #startLineage(): void {
    for (const call of this.#d.calls.running()) {
      if (call.lineage === this.#lineage) {
        this.#log.info({ callId: call.id, tool: call.name }, 'voice call orphaned: no resumption')
        this.#d.withdraw(call.id, 'connection_lost')
      }
    }
    if (this.#outbox.size > 0) {
      this.#log.info(
        { responses: this.#outbox.size },
        'voice queued answers dropped: no resumption',
      )
    }
    this.#outbox.clear()
    this.#handle = undefined
    // The new model reads the history from the store: write what is certain first.
    this.#d.transcript.flush()
    this.#lineage++
  }

  /**
   * The resumed session is the one the handle captured: a call made after that handle was issued
   * is unknown to it, and answering it there wedges the model. Such calls are treated like calls
   * of a connection that could not be resumed.
   */
  #forgetCallsAfter(seq: number, resumedOn: number): void {
    const unknown = new Set<string>()
    for (const call of this.#d.calls.all()) {
      if (call.lineage !== this.#lineage || call.connection >= resumedOn) continue
      if (call.handleSeq < seq) continue
      unknown.add(call.id)
      if (call.state === 'running') {
        this.#log.info(
          { callId: call.id, tool: call.name },
          'voice call orphaned: newer than the handle',
        )
        this.#d.withdraw(call.id, 'connection_lost')
      }
    }
    const dropped = this.#outbox.remove(unknown)
    if (dropped > 0) {
      this.#log.info({ responses: dropped }, 'voice queued answers dropped: newer than the handle')
    }
  }

  // ---- goAway, drops and resumption ------------------------------------------------------

  onGoAway(timeLeftMs: number | undefined): void {
    const canResume = this.#d.llm.capabilities.resumption && this.#handle !== undefined
    this.#log.info({ timeLeftMs, resume: canResume }, 'voice goAway')
    if (!canResume || this.#reconnecting) return
    // Resuming mid-reply cuts the reply off: wait for the end of the turn, but not past the cut.
    // Between turns it is safe at once (what is already in the speaker plays on regardless).
    if (!this.#d.turns.inTurn) {
      void this.#reconnect('goAway')
      return
    }
    this.#resumeAfterTurn = true
    const margin = this.#d.options.goAwayMarginMs
    const wait = timeLeftMs === undefined ? 0 : Math.max(0, timeLeftMs - margin)
    if (this.#resumeTimer) this.#d.clock.clearTimeout(this.#resumeTimer)
    this.#resumeTimer = this.#d.clock.setTimeout(() => {
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
    }
  }

  onClosed(conn: Connection, info: LiveCloseInfo): void {
    if (conn.retired || info.byClient) return
    conn.retired = true
    conn.live = false
    if (this.#conn === conn) this.#conn = undefined
    if (this.#opening === conn) this.#opening = undefined
    this.#log.warn(
      { connection: conn.n, code: info.code, reason: info.reason },
      'voice connection lost',
    )
    if (!this.#d.ending()) void this.#reconnect(`closed ${info.code}`)
  }

  async #reconnect(why: string): Promise<void> {
    if (this.#reconnecting || this.#d.ending()) return
    this.#reconnecting = true
    this.#resumeAfterTurn = false
    if (this.#resumeTimer) this.#d.clock.clearTimeout(this.#resumeTimer)
    this.#resumeTimer = undefined
    const old = this.#conn
    this.#conn = undefined
    try {
      if (old) {
        old.live = false
        old.retired = true
        // The provider refuses a resumption while the old socket is open: close it first.
        await this.closeQuietly(old)
      }
      const canResume = this.#d.llm.capabilities.resumption && this.#handle !== undefined
      this.#log.info({ why, resume: canResume }, 'voice reconnecting')
      if (canResume) {
        if (await this.connect('resume')) {
          this.#resumptions++
          return
        }
        this.#log.warn({ why }, 'voice resumption failed: opening a fresh connection')
      }
      for (let attempt = 1; attempt <= this.#d.options.maxReconnectAttempts; attempt++) {
        if (this.#d.ending()) return
        if (await this.connect('fresh')) {
          this.#fresh++
          return
        }
        // Back off between attempts, not after the last one: that would only delay the error.
        if (attempt < this.#d.options.maxReconnectAttempts) await this.#sleep(1000 * attempt)
      }
      if (this.#d.ending()) return
      this.#log.error({ why }, 'voice could not reconnect')
      this.#d.fail()
    } finally {
      this.#reconnecting = false
    }
  }

  // ---- ending ---------------------------------------------------------------------------

  /** A resumption put off by `goAway` will not happen. */
  cancelResume(): void {
    if (this.#resumeTimer) this.#d.clock.clearTimeout(this.#resumeTimer)
  }

  /**
   * At session end: nothing more is sent or heard. Returns the connections (open or opening) for
   * the caller to close.
   */
  retireAll(): Connection[] {
    this.#outbox.clear()
    const conns = [this.#conn, this.#opening].filter((c): c is Connection => c !== undefined)
    this.#conn = undefined
    this.#opening = undefined
    for (const c of conns) {
      c.live = false
      c.retired = true
    }
    return conns
  }

  async closeQuietly(conn: Connection): Promise<void> {
    try {
      await conn.session?.close()
    } catch (err) {
      this.#log.warn({ connection: conn.n, err: errorText(err) }, 'voice close failed')
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((r) => this.#d.clock.setTimeout(r, ms))
  }
}
