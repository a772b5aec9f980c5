import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { PendingNotice } from '../core/types.js'
import type { LiveSession, LiveToolCall, LiveToolResponse } from '../ports/live-llm.js'

/**
 * running: the tool (or the gate under it) is at work; answered: its one final answer is sent or
 * queued; withdrawn: the provider withdrew it, the session ended, or its connection is gone —
 * nothing is ever sent for it again.
 */
export type CallState = 'running' | 'answered' | 'withdrawn'

export type WithdrawReason = 'provider' | 'session_end' | 'connection_lost'

/** A tool call as its task sees it. Its state and where it came from are the ledger's. */
export interface VoiceCall {
  readonly id: string
  readonly name: string
  readonly args: unknown
  /** The turn current when the call was made (docs/voice-driver.md, rule 4). */
  readonly turn: number
  /** Aborts when the call is withdrawn: the tool and the gate under it unwind. */
  readonly signal: AbortSignal
  readonly startedAt: number
  readonly state: CallState
  readonly withdrawReason?: WithdrawReason
  /** The approval the gate is waiting on, while it waits. */
  readonly pending?: PendingNotice | undefined
  readonly interimSent: boolean
  /** The tool task has finished (whatever it came to). */
  settled: boolean
  /** Its outcome is in the transcript. */
  recorded: boolean
}

/** A connection as the ledger needs it: which one, its lineage, and where answers go. */
export interface Carrier {
  /** 1, 2, … in the order opened. */
  readonly n: number
  /** A resumed connection keeps its lineage; a fresh one starts a new one. */
  readonly lineage: number
  readonly session: LiveSession
}

/** Where a call came from: enough to say which connections may carry its answers. */
interface Origin {
  readonly lineage: number
  readonly connection: number
  /** Resumable handles that had arrived when it was made: an older handle never saw it. */
  readonly handleSeq: number
}

interface Entry {
  readonly call: MutableCall
  readonly origin: Origin
  readonly controller: AbortController
}

type MutableCall = {
  -readonly [K in keyof VoiceCall]: VoiceCall[K]
}

interface Queued {
  readonly lineage: number
  readonly response: LiveToolResponse
}

export interface CallLedgerDeps {
  readonly log: Logger
  /** Something the LED shows changed (a call waits, or stopped waiting). */
  changed(): void
}

/**
 * Every tool call of a session, from the model's `toolCall` to its last answer: its state, the
 * connection lineage that issued it, what may still be sent for it, and the only path by which a
 * tool response leaves the driver. Enforced here, once: at most one interim and exactly one final
 * answer per call; nothing for a withdrawn call; an answer only on a connection of the lineage that
 * asked, and never on a resumed session whose handle predates the call. Answers finished while no
 * such connection is open are queued and delivered when the lineage resumes, dropped if it cannot.
 *
 * It reacts to what the `ConnectionKeeper` reports (opened, closed, lineage lost, a new handle);
 * it never opens or closes a connection itself.
 */
export class CallLedger {
  readonly #deps: CallLedgerDeps
  readonly #log: Logger
  readonly #calls = new Map<string, Entry>()
  #queued: Queued[] = []
  /** The open, current connection: answers of its lineage go here. */
  #live: Carrier | undefined
  /** Lineages that can no longer be resumed: their answers are dropped, never queued. */
  readonly #lost = new Set<number>()
  #handleSeq = 0

  constructor(deps: CallLedgerDeps) {
    this.#deps = deps
    this.#log = deps.log
  }

  // ---- what the keeper reports ------------------------------------------------------------

  /**
   * A connection opened. A resumed one continues its lineage, but only as far as the handle it
   * resumed from: calls made after that handle are unknown to it and are withdrawn. What is queued
   * for the lineage goes out now.
   */
  opened(conn: Carrier, resumedFromHandle?: number): void {
    this.#live = conn
    if (resumedFromHandle !== undefined) this.#forgetCallsAfter(resumedFromHandle, conn)
    const out = this.#queued
    this.#queued = []
    for (const q of out) {
      if (q.lineage !== conn.lineage) continue
      this.#log.info(
        { callId: q.response.id, willContinue: q.response.willContinue === true },
        'voice queued answer delivered after resumption',
      )
      this.#respond(conn, q)
    }
  }

  /** A connection closed or was given up: nothing more goes to it. */
  closed(conn: { readonly n: number }): void {
    if (this.#live?.n === conn.n) this.#live = undefined
  }

  /** A resumable handle arrived: calls made from now on are unknown to the sessions before it. */
  handle(seq: number): void {
    this.#handleSeq = seq
  }

  /**
   * The lineage cannot be resumed: a fresh model never saw its calls. They are withdrawn (their
   * approvals leave the phones) and nothing of theirs is ever sent.
   */
  lineageLost(lineage: number): void {
    this.#lost.add(lineage)
    for (const { call, origin } of this.#calls.values()) {
      if (call.state !== 'running' || origin.lineage !== lineage) continue
      this.#log.info(
        { event: 'call_orphaned', cause: 'no_resumption', callId: call.id, tool: call.name },
        'voice call orphaned: no resumption',
      )
      this.withdraw(call.id, 'connection_lost')
    }
    const dropped = this.#drop((q) => q.lineage === lineage)
    if (dropped > 0) {
      this.#log.info({ responses: dropped }, 'voice queued answers dropped: no resumption')
    }
  }

  // ---- calls ----------------------------------------------------------------------------

  /** A call the model made on `from`; undefined when its id is already known. */
  issue(from: Omit<Carrier, 'session'>, c: LiveToolCall, turn: number, at: number) {
    if (this.#calls.has(c.id)) return undefined
    const controller = new AbortController()
    const call: MutableCall = {
      id: c.id,
      name: c.name,
      args: c.args,
      turn,
      signal: controller.signal,
      startedAt: at,
      state: 'running',
      interimSent: false,
      settled: false,
      recorded: false,
    }
    const origin = { lineage: from.lineage, connection: from.n, handleSeq: this.#handleSeq }
    this.#calls.set(call.id, { call, origin, controller })
    return call as VoiceCall
  }

  get(id: string): VoiceCall | undefined {
    return this.#calls.get(id)?.call
  }

  /** The gate started waiting for a human on this call. False when the call is not running. */
  waiting(call: VoiceCall, notice: PendingNotice): boolean {
    const e = this.#calls.get(call.id)
    if (e?.call.state !== 'running') return false
    e.call.pending = notice
    return true
  }

  /**
   * Withdraws a running call: its signal aborts (the tool and the gate unwind, the approval is
   * taken off every phone), an answer still queued for it is dropped, and nothing more is sent.
   */
  withdraw(id: string, reason: WithdrawReason): boolean {
    const e = this.#calls.get(id)
    if (e?.call.state !== 'running') return false
    const waited = e.call.pending
    e.call.state = 'withdrawn'
    e.call.withdrawReason = reason
    e.call.pending = undefined
    e.controller.abort(new Error(`call withdrawn: ${reason}`))
    this.#drop((q) => q.response.id === id)
    this.#log.info(
      {
        event: 'call_withdrawn',
        callId: id,
        tool: e.call.name,
        reason,
        approvalWithdrawn: waited?.approvalId,
      },
      'voice call withdrawn',
    )
    this.#deps.changed()
    return true
  }

  /** The session ends: every running call is withdrawn, nothing queued will go out. */
  endSession(): void {
    for (const call of this.running()) this.withdraw(call.id, 'session_end')
    this.#queued = []
    this.#live = undefined
  }

  // ---- answers: the only way out --------------------------------------------------------

  /** The interim answer while a phone decides; at most one per call, only while it runs. */
  sendInterim(call: VoiceCall, response: LiveToolResponse): boolean {
    const e = this.#calls.get(call.id)
    if (e?.call.state !== 'running' || e.call.interimSent) return false
    e.call.interimSent = true
    this.#send(e, response)
    return true
  }

  /** The one final answer; false (and nothing sent) when the call is withdrawn or answered. */
  sendFinal(call: VoiceCall, response: LiveToolResponse): boolean {
    const e = this.#calls.get(call.id)
    if (e?.call.state !== 'running') return false
    e.call.state = 'answered'
    e.call.pending = undefined
    this.#send(e, response)
    return true
  }

  // ---- queries ---------------------------------------------------------------------------

  running(): VoiceCall[] {
    return this.#list((c) => c.state === 'running')
  }

  /** Calls whose tool task has not finished yet, whatever their state. */
  unsettled(): VoiceCall[] {
    return this.#list((c) => !c.settled)
  }

  /** Calls waiting for a human right now. */
  waitingForApproval(): number {
    return this.#list((c) => c.state === 'running' && c.pending !== undefined).length
  }

  counts(): Record<CallState, number> {
    const out: Record<CallState, number> = { running: 0, answered: 0, withdrawn: 0 }
    for (const { call } of this.#calls.values()) out[call.state]++
    return out
  }

  // ---- inside ----------------------------------------------------------------------------

  #send(e: Entry, response: LiveToolResponse): void {
    const q: Queued = { lineage: e.origin.lineage, response }
    const live = this.#live
    if (live && live.lineage === e.origin.lineage) {
      this.#respond(live, q)
      return
    }
    if (!this.#lost.has(e.origin.lineage)) {
      // Between connections: delivered when this lineage resumes, dropped if it cannot.
      this.#log.info({ callId: e.call.id }, 'voice answer queued until the connection resumes')
      this.#queued.push(q)
      return
    }
    this.#log.warn(
      { event: 'voice_answer_dropped', callId: e.call.id },
      'voice answer for a lost connection dropped',
    )
  }

  #respond(conn: Carrier, q: Queued): void {
    try {
      conn.session.respond(q.response)
    } catch (err) {
      // The port says respond throws on a closed connection: keep the answer for the resumption.
      this.#log.warn(
        { event: 'voice_respond_failed', callId: q.response.id, err: errorText(err) },
        'voice respond failed: queued',
      )
      this.#queued.push(q)
    }
  }

  /**
   * The resumed session is the one the handle captured: a call made after that handle was issued
   * is unknown to it, and answering it there wedges the model. Such calls are treated like calls
   * of a connection that could not be resumed.
   */
  #forgetCallsAfter(seq: number, resumed: Carrier): void {
    const unknown = new Set<string>()
    for (const { call, origin } of this.#calls.values()) {
      if (origin.lineage !== resumed.lineage || origin.connection >= resumed.n) continue
      if (origin.handleSeq < seq) continue
      unknown.add(call.id)
      if (call.state === 'running') {
        this.#log.info(
          { event: 'call_orphaned', cause: 'newer_than_handle', callId: call.id, tool: call.name },
          'voice call orphaned: newer than the handle',
        )
        this.withdraw(call.id, 'connection_lost')
      }
    }
    const dropped = this.#drop((q) => unknown.has(q.response.id))
    if (dropped > 0) {
      this.#log.info({ responses: dropped }, 'voice queued answers dropped: newer than the handle')
    }
  }

  #drop(match: (q: Queued) => boolean): number {
    const before = this.#queued.length
    this.#queued = this.#queued.filter((q) => !match(q))
    return before - this.#queued.length
  }

  #list(match: (c: VoiceCall) => boolean): VoiceCall[] {
    const out: VoiceCall[] = []
    for (const { call } of this.#calls.values()) if (match(call)) out.push(call)
    return out
  }
}
