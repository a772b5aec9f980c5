import type { CallContext, PendingNotice } from '../core/context.js'
import type { ToolCallRecord, ToolOutcome } from '../core/conversation.js'
import type { Logger } from '../core/logger.js'
import type { TimerHandle } from '../ports/clock.js'
import type {
  LiveCloseInfo,
  LiveEvents,
  LiveSession,
  LiveSetup,
  LiveToolCall,
  LiveToolResponse,
} from '../ports/live-llm.js'
import { CallRegistry, type LiveCall, type WithdrawReason } from './call-registry.js'
import { GapBuffer } from './gap-buffer.js'
import { SessionTimers } from './session-timers.js'
import {
  DEFAULT_VOICE_OPTIONS,
  type SessionEndReason,
  type SessionHooks,
  type SessionSummary,
  type VoiceMic,
  type VoiceOptions,
  type VoiceSessionDeps,
  type WaitingNotice,
} from './session-types.js'
import { finalAnswer, interimAnswer } from './tool-answers.js'
import { TranscriptAssembler } from './transcript-assembler.js'
import { TurnCounter } from './turn-counter.js'

// The session's options and the shapes it shares with the driver live in session-types.ts; they
// stay importable from here, where src/app/ and the tests look for them.
export {
  DEFAULT_VOICE_OPTIONS,
  type SessionEndReason,
  type SessionHooks,
  type SessionSummary,
  type VoiceMic,
  type VoiceOptions,
  type VoiceSessionDeps,
  type WaitingNotice,
}

interface Connection {
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

interface Outgoing {
  readonly lineage: number
  readonly response: LiveToolResponse
}

/**
 * One spoken session: opens the connection, wires provider events to the speaker, the tools and
 * the transcript, resumes across `goAway`, and ends on budget, idle, error or request. The audio
 * path — microphone frame → `sendAudio`, model audio → `speaker.write`, `interrupted` → `drop` —
 * never awaits anything; every tool call runs as its own task.
 */
export class VoiceSession {
  readonly conversationId: string
  readonly #d: VoiceSessionDeps
  readonly #hooks: SessionHooks
  readonly #log: Logger
  readonly #turns = new TurnCounter()
  readonly #calls = new CallRegistry()
  readonly #transcript: TranscriptAssembler
  readonly #timers: SessionTimers
  readonly #startedAt: number
  #conn?: Connection
  #opening?: Connection
  #connections = 0
  #lineage = 0
  #handle?: string
  /** Resumable handles received so far; the last one is `#handle`. */
  #handleSeq = 0
  #outbox: Outgoing[] = []
  readonly #gap: GapBuffer
  #reconnecting = false
  #resumeAfterTurn = false
  #resumeTimer?: TimerHandle
  #speaking = false
  #speakingTimer?: TimerHandle
  /** The stop button dropped this reply: the rest of it is not played either. */
  #suppressReply = false
  /**
   * Between `interrupted` and the next sign of a new generation (its audio, or `turnComplete`):
   * transcription arriving now is the tail of the cut reply (it is not ordered against the audio).
   */
  #afterBargeIn = false
  #sendFailed = false
  #ending = false
  #error = false
  #resumptions = 0
  #fresh = 0
  #drained?: () => void
  readonly #done: Promise<SessionSummary>
  #finish!: (s: SessionSummary) => void

  constructor(deps: VoiceSessionDeps, hooks: SessionHooks, conversationId: string) {
    this.#d = deps
    this.#hooks = hooks
    this.conversationId = conversationId
    this.#log = deps.logger.child({ component: 'voice', conversation: conversationId })
    this.#startedAt = deps.clock.now()
    this.#gap = new GapBuffer(deps.options.gapBufferMs)
    this.#transcript = new TranscriptAssembler({
      store: deps.store,
      conversationId,
      clock: deps.clock,
      log: this.#log,
    })
    this.#timers = new SessionTimers({
      clock: deps.clock,
      budgetMs: deps.options.budgetMs,
      idleMs: deps.options.idleMs,
      playingMs: () => deps.speaker.queuedMs(),
      onExpire: (reason) => void this.end(reason),
    })
    this.#done = new Promise((r) => {
      this.#finish = r
    })
  }

  get speaking(): boolean {
    return this.#speaking
  }

  get waitingForApproval(): boolean {
    return this.#calls.waitingForApproval() > 0
  }

  get error(): boolean {
    return this.#error
  }

  get ended(): boolean {
    return this.#ending
  }

  /** Opens the first connection and runs until the session ends; resolves with a summary. */
  async run(preRoll: readonly Uint8Array[] = []): Promise<SessionSummary> {
    this.#logCapabilities()
    for (const f of preRoll) this.#gap.push(f)
    this.#timers.start()
    // The microphone and the connection start together: frames before the open are kept.
    const micStarted = Promise.resolve()
      .then(() =>
        this.#d.mic.start({
          frame: (pcm) => this.#frame(pcm),
          error: (err) => {
            this.#log.error({ err: err.message }, 'voice microphone failed')
            this.#error = true
            void this.end('error')
          },
        }),
      )
      .then(
        () => true,
        (err: unknown) => {
          this.#log.error({ err: errText(err) }, 'voice microphone would not start')
          return false
        },
      )
    const [micOk, connected] = await Promise.all([micStarted, this.#connect('fresh')])
    // A first connection lost while opening is already being replaced by #reconnect.
    if (!this.#ending && (!micOk || (!connected && !this.#reconnecting))) {
      this.#error = true
      void this.end('error')
    }
    return this.#done
  }

  /** Mute: no frame leaves (the MicGate sees to that); the provider is told the stream ended. */
  muted(): void {
    this.#gap.clear()
    const s = this.#conn?.live ? this.#conn.session : undefined
    if (!s) return
    try {
      s.endAudio()
    } catch (err) {
      this.#log.warn({ err: errText(err) }, 'voice endAudio failed')
    }
  }

  /** The long press: stop speaking now, without muting and without cancelling anything. */
  stopSpeaking(): void {
    const r = this.#d.speaker.drop()
    this.#log.info(
      { discardedMs: r.discardedMs, playedMs: r.playedMs, why: 'stop button' },
      'voice playback dropped',
    )
    if (this.#turns.inTurn) {
      this.#suppressReply = true
      this.#transcript.cutReply()
    }
    this.#checkSpeaking()
  }

  /** Ends the session cleanly: approvals withdrawn, transcript complete, connection closed. */
  async end(reason: SessionEndReason): Promise<SessionSummary> {
    if (this.#ending) return this.#done
    this.#ending = true
    const { clock } = this.#d
    this.#log.info(
      { reason, waitingForApproval: this.#calls.waitingForApproval() },
      'voice session ending',
    )
    this.#timers.stop()
    if (this.#resumeTimer) clock.clearTimeout(this.#resumeTimer)
    if (this.#speakingTimer) clock.clearTimeout(this.#speakingTimer)
    this.#transcript.flush()
    // Nobody will hear these answers: withdraw them, so no phone keeps asking.
    for (const call of this.#calls.running()) this.#withdraw(call.id, 'session_end')
    this.#outbox = []
    const conns = [this.#conn, this.#opening].filter((c): c is Connection => c !== undefined)
    this.#conn = undefined
    this.#opening = undefined
    for (const c of conns) {
      c.live = false
      c.retired = true
    }
    this.#hooks.changed()
    await Promise.all([
      ...conns.map((c) => this.#closeQuietly(c)),
      Promise.resolve()
        .then(() => this.#d.mic.stop())
        .catch((err: unknown) => {
          this.#log.warn({ err: errText(err) }, 'voice microphone stop failed')
        }),
      this.#drain(),
    ])
    for (const call of this.#calls.unsettled()) {
      this.#log.warn(
        { callId: call.id, tool: call.name },
        'voice call still running at session end',
      )
      this.#record(call, {
        ok: false,
        code: 'NOC_ERR_CANCELLED',
        error: 'the session ended before the call finished',
      })
    }
    const counts = this.#calls.counts()
    const summary: SessionSummary = {
      conversationId: this.conversationId,
      reason,
      startedAt: this.#startedAt,
      endedAt: clock.now(),
      turns: this.#turns.current,
      calls: { answered: counts.answered, withdrawn: counts.withdrawn },
      resumptions: this.#resumptions,
      freshConnections: this.#fresh,
      messagesWritten: this.#transcript.written,
    }
    this.#log.info({ ...summary }, 'voice session ended')
    this.#finish(summary)
    return summary
  }

  // ---- the microphone -------------------------------------------------------------------

  #frame(pcm: Uint8Array): void {
    const c = this.#conn
    if (c?.live && c.session) {
      try {
        c.session.sendAudio(pcm)
      } catch (err) {
        // A socket that died under us: its close event starts the reconnect; say so once.
        if (!this.#sendFailed) this.#log.warn({ err: errText(err) }, 'voice sendAudio failed')
        this.#sendFailed = true
      }
      return
    }
    if (!this.#ending) this.#gap.push(pcm)
  }

  #flushGap(session: LiveSession): void {
    const { frames, dropped } = this.#gap.take()
    if (dropped > 0) this.#log.info({ frames: dropped }, 'voice microphone frames dropped in a gap')
    if (this.#hooks.isMuted()) return
    try {
      for (const f of frames) session.sendAudio(f)
    } catch (err) {
      this.#log.warn({ err: errText(err) }, 'voice sendAudio failed')
    }
  }

  // ---- connections ----------------------------------------------------------------------

  async #connect(kind: 'resume' | 'fresh'): Promise<boolean> {
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
      history: resumeHandle ? undefined : store.messages(this.conversationId),
      resumeHandle,
    }
    this.#opening = conn
    let session: LiveSession
    try {
      session = await llm.open(setup, this.#eventsFor(conn))
    } catch (err) {
      if (this.#opening === conn) this.#opening = undefined
      conn.retired = true
      this.#log.warn({ connection: conn.n, kind, err: errText(err) }, 'voice connection failed')
      return false
    }
    if (this.#opening === conn) this.#opening = undefined
    conn.session = session
    if (this.#ending || conn.retired) {
      conn.retired = true
      await this.#closeQuietly(conn)
      return false
    }
    conn.live = true
    this.#conn = conn
    this.#sendFailed = false
    if (resumeHandle) this.#forgetCallsAfter(resumedFrom, conn.n)
    this.#log.info(
      { connection: conn.n, lineage: conn.lineage, kind, history: setup.history?.length ?? 0 },
      kind === 'resume' ? 'voice connection resumed' : 'voice connection opened',
    )
    this.#flushOutbox(conn)
    this.#flushGap(session)
    this.#hooks.changed()
    return true
  }

  /**
   * A fresh connection is a new model that never saw the old calls: they are withdrawn (their
   * approvals taken off the phones) and nothing of theirs is ever sent on the new one.
   */
  #startLineage(): void {
    for (const call of this.#calls.running()) {
      if (call.lineage === this.#lineage) {
        this.#log.info({ callId: call.id, tool: call.name }, 'voice call orphaned: no resumption')
        this.#withdraw(call.id, 'connection_lost')
      }
    }
    if (this.#outbox.length > 0) {
      this.#log.info(
        { responses: this.#outbox.length },
        'voice queued answers dropped: no resumption',
      )
    }
    this.#outbox = []
    this.#handle = undefined
    // The new model reads the history from the store: write what is certain first.
    this.#transcript.flush()
    this.#lineage++
  }

  /**
   * The resumed session is the one the handle captured: a call made after that handle was issued
   * is unknown to it, and answering it there wedges the model. Such calls are treated like calls
   * of a connection that could not be resumed.
   */
  #forgetCallsAfter(seq: number, resumedOn: number): void {
    const unknown = new Set<string>()
    for (const call of this.#calls.all()) {
      if (call.lineage !== this.#lineage || call.connection >= resumedOn) continue
      if (call.handleSeq < seq) continue
      unknown.add(call.id)
      if (call.state === 'running') {
        this.#log.info(
          { callId: call.id, tool: call.name },
          'voice call orphaned: newer than the handle',
        )
        this.#withdraw(call.id, 'connection_lost')
      }
    }
    const before = this.#outbox.length
    this.#outbox = this.#outbox.filter((o) => !unknown.has(o.response.id))
    if (this.#outbox.length < before) {
      this.#log.info(
        { responses: before - this.#outbox.length },
        'voice queued answers dropped: newer than the handle',
      )
    }
  }

  async #reconnect(why: string): Promise<void> {
    if (this.#reconnecting || this.#ending) return
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
        await this.#closeQuietly(old)
      }
      const canResume = this.#d.llm.capabilities.resumption && this.#handle !== undefined
      this.#log.info({ why, resume: canResume }, 'voice reconnecting')
      if (canResume) {
        if (await this.#connect('resume')) {
          this.#resumptions++
          return
        }
        this.#log.warn({ why }, 'voice resumption failed: opening a fresh connection')
      }
      for (let attempt = 1; attempt <= this.#d.options.maxReconnectAttempts; attempt++) {
        if (this.#ending) return
        if (await this.#connect('fresh')) {
          this.#fresh++
          return
        }
        await this.#sleep(1000 * attempt)
      }
      if (this.#ending) return
      this.#log.error({ why }, 'voice could not reconnect')
      this.#error = true
      void this.end('error')
    } finally {
      this.#reconnecting = false
    }
  }

  #flushOutbox(conn: Connection): void {
    const out = this.#outbox
    this.#outbox = []
    for (const o of out) {
      if (o.lineage !== conn.lineage) continue
      this.#log.info(
        { callId: o.response.id, willContinue: o.response.willContinue === true },
        'voice queued answer delivered after resumption',
      )
      this.#respond(conn, o)
    }
  }

  #respond(conn: Connection, o: Outgoing): void {
    try {
      conn.session?.respond(o.response)
    } catch (err) {
      // The socket died under us; keep the answer for the connection that resumes this one.
      this.#log.warn({ callId: o.response.id, err: errText(err) }, 'voice respond failed: queued')
      this.#outbox.push(o)
    }
  }

  async #closeQuietly(conn: Connection): Promise<void> {
    try {
      await conn.session?.close()
    } catch (err) {
      this.#log.warn({ connection: conn.n, err: errText(err) }, 'voice close failed')
    }
  }

  // ---- provider events ------------------------------------------------------------------

  #eventsFor(conn: Connection): LiveEvents {
    const ok = (what: string): boolean => {
      if (!conn.retired) return true
      this.#log.debug({ connection: conn.n, event: what }, 'voice event from a closed connection')
      return false
    }
    return {
      audio: (pcm) => ok('audio') && this.#onAudio(pcm),
      inputTranscription: (text) => ok('inputTranscription') && this.#onUserText(text),
      outputTranscription: (text) => ok('outputTranscription') && this.#onModelText(text),
      interrupted: () => ok('interrupted') && this.#onInterrupted(),
      generationComplete: () => {
        ok('generationComplete')
      },
      turnComplete: () => ok('turnComplete') && this.#onTurnComplete(),
      toolCall: (calls) => ok('toolCall') && this.#onToolCall(conn, calls),
      toolCallCancellation: (ids) => ok('toolCallCancellation') && this.#onCancellation(ids),
      goAway: (ms) => ok('goAway') && this.#onGoAway(ms),
      resumptionUpdate: (h, r) => ok('resumptionUpdate') && this.#onResumption(h, r),
      usage: () => undefined,
      closed: (info) => this.#onClosed(conn, info),
    }
  }

  #onAudio(pcm: Uint8Array): void {
    this.#afterBargeIn = false
    this.#sign('model_output')
    if (this.#suppressReply) return
    this.#transcript.modelOutput()
    this.#timers.activity()
    this.#d.speaker.write(pcm)
    if (!this.#speaking) {
      this.#speaking = true
      this.#hooks.changed()
    }
    if (!this.#speakingTimer) this.#armSpeaking()
  }

  #armSpeaking(): void {
    const left = this.#d.speaker.queuedMs()
    this.#speakingTimer = this.#d.clock.setTimeout(
      () => {
        this.#speakingTimer = undefined
        this.#checkSpeaking()
      },
      Math.max(1, left),
    )
  }

  #checkSpeaking(): void {
    const playing = this.#d.speaker.queuedMs() > 0
    if (playing && !this.#speakingTimer) this.#armSpeaking()
    if (playing !== this.#speaking) {
      this.#speaking = playing
      this.#hooks.changed()
    }
  }

  #onUserText(text: string): void {
    if (text.trim() !== '') this.#sign('user_speech')
    this.#timers.activity()
    this.#transcript.userText(text)
  }

  #onModelText(text: string): void {
    if (this.#afterBargeIn) {
      this.#log.debug({ chars: text.length }, 'voice late transcription of a cut reply dropped')
      return
    }
    if (text.trim() !== '') this.#sign('model_output')
    this.#timers.activity()
    this.#transcript.modelText(text)
  }

  #sign(kind: 'user_speech' | 'model_output'): void {
    const started = this.#turns.signal(kind)
    if (started !== undefined) this.#log.debug({ turn: started, by: kind }, 'voice turn started')
  }

  #onInterrupted(): void {
    // First, before anything else: what is buffered for the speaker is stale.
    const r = this.#d.speaker.drop()
    this.#log.info(
      { discardedMs: r.discardedMs, playedMs: r.playedMs, why: 'barge-in' },
      'voice playback dropped',
    )
    this.#suppressReply = false
    this.#afterBargeIn = true
    this.#transcript.interrupted()
    this.#turns.end()
    this.#checkSpeaking()
  }

  #onTurnComplete(): void {
    if (!this.#turns.end()) {
      this.#log.debug({ turn: this.#turns.current }, 'voice turnComplete with no turn open')
    }
    this.#suppressReply = false
    this.#afterBargeIn = false
    this.#transcript.turnComplete()
    if (this.#resumeAfterTurn) void this.#reconnect('goAway, at the end of the turn')
  }

  #onToolCall(conn: Connection, calls: readonly LiveToolCall[]): void {
    this.#sign('model_output')
    this.#timers.activity()
    const accepted: LiveCall[] = []
    for (const c of Array.isArray(calls) ? calls : []) {
      const id = typeof c?.id === 'string' ? c.id : ''
      if (id === '') {
        this.#log.error({ tool: String(c?.name).slice(0, 80) }, 'voice tool call without an id')
        continue
      }
      const call = this.#calls.add({
        id,
        name: typeof c.name === 'string' ? c.name : String(c.name),
        args: c.args ?? {},
        turn: this.#turns.current,
        lineage: conn.lineage,
        connection: conn.n,
        handleSeq: this.#handleSeq,
        at: this.#d.clock.now(),
      })
      if (!call) {
        const known = this.#calls.get(id)
        this.#log.warn({ callId: id, state: known?.state }, 'voice duplicate tool call id ignored')
        continue
      }
      accepted.push(call)
    }
    if (accepted.length === 0) return
    this.#transcript.toolCalls(accepted.map(recordOf))
    for (const call of accepted) {
      this.#log.info({ callId: call.id, tool: call.name, turn: call.turn }, 'voice tool call')
      // Its own task: the event handler returns before the tool (or its gate) starts.
      queueMicrotask(() => void this.#run(call))
    }
  }

  async #run(call: LiveCall): Promise<void> {
    const ctx: CallContext = {
      signal: call.controller.signal,
      channel: 'voice',
      conversationId: this.conversationId,
      callId: call.id,
      gate: this.#d.gate,
      logger: this.#log.child({ callId: call.id }),
      onPending: (n) => this.#onPending(call, n),
    }
    let outcome: ToolOutcome
    try {
      outcome = await this.#d.tools.call(ctx, call.name, call.args)
    } catch (err) {
      // ToolSet.call never throws; should that ever change, the call is still answered.
      outcome = { ok: false, code: 'NOC_ERR_TOOL_FAILED', error: `${call.name} failed` }
      this.#log.error({ callId: call.id, err: errText(err) }, 'voice tool call threw')
    }
    call.settled = true
    this.#onOutcome(call, outcome)
    if (this.#calls.unsettled().length === 0) this.#drained?.()
  }

  #onPending(call: LiveCall, notice: PendingNotice): void {
    if (call.state !== 'running' || this.#ending) return
    call.pending = notice
    const caps = this.#d.llm.capabilities
    this.#log.info(
      { callId: call.id, approvalId: notice.approvalId, audience: notice.audience },
      'voice call waiting for approval',
    )
    if (caps.asyncToolCalls) {
      if (!call.interimSent) {
        call.interimSent = true
        this.#send(call, interimAnswer(call, notice))
        this.#log.info({ callId: call.id, scheduling: 'WHEN_IDLE' }, 'voice interim answer sent')
      }
    } else {
      // The model is silent until the answer: the device fills the dead air locally.
      this.#log.info({ callId: call.id }, 'voice waiting cue: the model waits silently')
      this.#hooks.waiting({
        callId: call.id,
        approvalId: notice.approvalId,
        tool: notice.tool,
        action: notice.action,
        audience: notice.audience,
      })
    }
    this.#hooks.changed()
  }

  #onOutcome(call: LiveCall, outcome: ToolOutcome): void {
    this.#record(call, outcome)
    if (call.state === 'withdrawn') {
      this.#log.info(
        { callId: call.id, reason: call.withdrawReason, code: outcome.ok ? 'ok' : outcome.code },
        'voice withdrawn call settled: nothing sent',
      )
      this.#hooks.changed()
      return
    }
    if (!this.#calls.answer(call)) return
    if (!this.#d.llm.capabilities.asyncToolCalls) {
      this.#log.info({ callId: call.id, tool: call.name, ok: outcome.ok }, 'voice final answer')
      this.#send(call, finalAnswer(call, outcome))
      this.#hooks.changed()
      return
    }
    const scheduling = this.#turns.schedulingFor(call.turn)
    const turnsSince = this.#turns.since(call.turn)
    this.#log.info(
      {
        callId: call.id,
        tool: call.name,
        ok: outcome.ok,
        scheduling,
        turnsSince,
        why: turnsSince === 0 ? 'no new turn since the call' : 'a new turn started since the call',
      },
      'voice final answer',
    )
    this.#send(call, finalAnswer(call, outcome, { scheduling, afterInterim: call.interimSent }))
    this.#hooks.changed()
  }

  #record(call: LiveCall, outcome: ToolOutcome): void {
    if (call.recorded) return
    call.recorded = true
    this.#transcript.toolOutcome(recordOf(call), outcome)
  }

  #send(call: LiveCall, response: LiveToolResponse): void {
    const o: Outgoing = { lineage: call.lineage, response }
    const c = this.#conn
    if (c?.live && c.lineage === call.lineage) {
      this.#respond(c, o)
      return
    }
    if (call.lineage === this.#lineage) {
      // Between connections: delivered when this lineage resumes, dropped if it cannot.
      this.#log.info({ callId: call.id }, 'voice answer queued until the connection resumes')
      this.#outbox.push(o)
      return
    }
    this.#log.warn({ callId: call.id }, 'voice answer for a lost connection dropped')
  }

  #onCancellation(ids: readonly string[]): void {
    for (const id of Array.isArray(ids) ? ids : []) {
      if (!this.#withdraw(String(id), 'provider')) {
        const known = this.#calls.get(String(id))
        this.#log.warn(
          { callId: String(id).slice(0, 120), state: known?.state ?? 'unknown' },
          'voice cancellation for a call not running ignored',
        )
      }
    }
  }

  #withdraw(id: string, reason: WithdrawReason): boolean {
    const waiting = this.#calls.get(id)?.pending
    const call = this.#calls.withdraw(id, reason)
    if (!call) return false
    // An interim still queued for it must not go out either.
    this.#outbox = this.#outbox.filter((o) => o.response.id !== id)
    this.#log.info(
      { callId: id, tool: call.name, reason, approvalWithdrawn: waiting?.approvalId },
      'voice call withdrawn',
    )
    this.#hooks.changed()
    return true
  }

  #onGoAway(timeLeftMs: number | undefined): void {
    const canResume = this.#d.llm.capabilities.resumption && this.#handle !== undefined
    this.#log.info({ timeLeftMs, resume: canResume }, 'voice goAway')
    if (!canResume || this.#reconnecting) return
    // Resuming mid-reply cuts the reply off: wait for the end of the turn, but not past the cut.
    // Between turns it is safe at once (what is already in the speaker plays on regardless).
    if (!this.#turns.inTurn) {
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

  #onResumption(handle: string | undefined, resumable: boolean): void {
    // Keep the last handle that can be resumed; an update saying "not now" does not erase it.
    if (resumable && typeof handle === 'string' && handle !== '') {
      this.#handle = handle
      this.#handleSeq++
    }
  }

  #onClosed(conn: Connection, info: LiveCloseInfo): void {
    if (conn.retired || info.byClient) return
    conn.retired = true
    conn.live = false
    if (this.#conn === conn) this.#conn = undefined
    if (this.#opening === conn) this.#opening = undefined
    this.#log.warn(
      { connection: conn.n, code: info.code, reason: info.reason },
      'voice connection lost',
    )
    if (!this.#ending) void this.#reconnect(`closed ${info.code}`)
  }

  // ---- helpers --------------------------------------------------------------------------

  #logCapabilities(): void {
    const caps = this.#d.llm.capabilities
    if (caps.asyncToolCalls) {
      this.#log.info(
        { model: caps.model, nonBlocking: true, why: 'the model supports asynchronous calls' },
        'voice tools declared',
      )
    } else {
      this.#log.info(
        { model: caps.model, nonBlocking: false, why: 'the model has no asynchronous calls' },
        'voice tools declared',
      )
      this.#log.warn(
        { model: caps.model },
        'approvals will be dead air on this model: it is silent while a phone decides',
      )
    }
    if (!caps.transcription) {
      this.#log.warn({ model: caps.model }, 'voice transcript will hold tool calls only')
    }
  }

  #drain(): Promise<void> {
    if (this.#calls.unsettled().length === 0) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = this.#d.clock.setTimeout(() => done(), this.#d.options.endDrainMs)
      const done = () => {
        this.#drained = undefined
        this.#d.clock.clearTimeout(timer)
        resolve()
      }
      this.#drained = done
    })
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((r) => this.#d.clock.setTimeout(r, ms))
  }
}

function recordOf(call: LiveCall): ToolCallRecord {
  return { id: call.id, name: call.name, args: call.args }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
