import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { LiveEvents, LiveToolCall } from '../ports/live-llm.js'
import { CallLedger } from './call-ledger.js'
import { type Connection, ConnectionKeeper } from './connection-keeper.js'
import { MicUplink } from './mic-uplink.js'
import { SessionTimers } from './session-timers.js'
import type {
  SessionEndReason,
  SessionHooks,
  SessionSummary,
  VoiceSessionDeps,
} from './session-types.js'
import { SpeakingWatch } from './speaking-watch.js'
import { ToolCallRunner } from './tool-call-runner.js'
import { TranscriptAssembler } from './transcript-assembler.js'
import { TurnCounter } from './turn-counter.js'
import { type WakeCheck, WakeConfirmation } from './wake-confirmation.js'

/**
 * One spoken session: opens the connection, wires provider events to the speaker, the tools and
 * the transcript, resumes across `goAway`, and ends on budget, idle, error or request. The audio
 * path — microphone frame → `sendAudio`, model audio → `speaker.write`, `interrupted` → `drop` —
 * never awaits anything; every tool call runs as its own task.
 *
 * The connections and their resumption are the `ConnectionKeeper`'s, which only reports what
 * happened; the calls, their lineage and every answer that leaves are the `CallLedger`'s;
 * microphone audio the `MicUplink`'s, the tool-call tasks the `ToolCallRunner`'s, the speaking
 * light the `SpeakingWatch`'s. What is left here is the wiring (who reacts to which connection
 * event), the provider events, turns, the speaker and the transcript, and the start and end.
 */
export class VoiceSession {
  readonly conversationId: string
  readonly #deps: VoiceSessionDeps
  readonly #hooks: SessionHooks
  readonly #log: Logger
  readonly #turns = new TurnCounter()
  readonly #calls: CallLedger
  readonly #transcript: TranscriptAssembler
  readonly #timers: SessionTimers
  readonly #uplink: MicUplink
  readonly #link: ConnectionKeeper
  readonly #runner: ToolCallRunner
  readonly #startedAt: number
  readonly #speakingWatch: SpeakingWatch
  /** The stop button dropped this reply: the rest of it is not played either. */
  #suppressReply = false
  /**
   * Between `interrupted` and the next sign of a new generation (its audio, or `turnComplete`):
   * transcription arriving now is the tail of the cut reply (it is not ordered against the audio).
   */
  #afterBargeIn = false
  #ending = false
  #error = false
  /** The second opinion on the wake that opened this session, while it is being asked. */
  #confirmation: WakeConfirmation | undefined
  /** What the model did before the wake was confirmed, replayed in order once it is. */
  #held: (() => void)[] = []
  /** Tokens billed so far, from the provider's usage reports. */
  #tokens = 0
  readonly #done: Promise<SessionSummary>
  #finish!: (s: SessionSummary) => void

  constructor(deps: VoiceSessionDeps, hooks: SessionHooks, conversationId: string) {
    this.#deps = deps
    this.conversationId = conversationId
    this.#log = deps.logger.child({ component: 'voice', conversation: conversationId })
    this.#startedAt = deps.clock.now()
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
      waitingForHuman: () => this.#calls.waitingForApproval() > 0,
      modelHears: () => this.#link.liveSession !== undefined,
      onExpire: (reason) => void this.end(reason),
    })
    this.#speakingWatch = new SpeakingWatch({
      clock: deps.clock,
      speaker: deps.speaker,
      changed: () => {
        // Played out (not dropped: a drop cuts the reply first): the reply was heard.
        if (!this.#speakingWatch.speaking) this.#transcript.playedOut()
        hooks.changed()
      },
    })
    const ending = () => this.#ending
    // When the last pending approval settles, the wait for a human is over and the room's quiet
    // time starts from then (SessionTimers does not count it while a phone is deciding).
    let waited = false
    const sessionHooks: SessionHooks = {
      ...hooks,
      changed: () => {
        const waiting = this.#calls.waitingForApproval() > 0
        if (waited && !waiting) this.#timers.activity()
        waited = waiting
        hooks.changed()
      },
    }
    this.#hooks = sessionHooks
    this.#calls = new CallLedger({ log: this.#log, changed: () => sessionHooks.changed() })
    this.#uplink = new MicUplink({
      gapBufferMs: deps.options.gapBufferMs,
      log: this.#log,
      live: () => this.#link.liveSession,
      isMuted: () => hooks.isMuted(),
      ending,
    })
    // The keeper reports; the ledger, the transcript and the uplink react, in this order: answers
    // kept for a resumed lineage go out before the audio kept in the gap.
    this.#link = new ConnectionKeeper({
      ...deps,
      conversationId,
      log: this.#log,
      events: (conn) => this.#eventsFor(conn),
      inTurn: () => this.#turns.inTurn,
      ending,
      fail: () => this.#fail(),
      listener: {
        opened: (conn, resumedFrom) => {
          // Quiet time counts only while the model can hear: the room is not idle because the
          // connection took long to open (a slow board, the SDK loading, a slow network).
          this.#timers.activity()
          this.#confirmation?.start()
          this.#uplink.opened()
          this.#calls.opened(conn, resumedFrom)
          this.#uplink.flushGap(conn.session)
          sessionHooks.changed()
        },
        lineageLost: (lineage) => {
          this.#calls.lineageLost(lineage)
          // The new model reads the history from the store: write what is certain first.
          this.#transcript.flush()
        },
        closed: (conn) => this.#calls.closed(conn),
        handle: (seq) => this.#calls.handle(seq),
      },
    })
    this.#runner = new ToolCallRunner({
      ...deps,
      conversationId,
      log: this.#log,
      hooks: sessionHooks,
      ledger: this.#calls,
      turns: this.#turns,
      transcript: this.#transcript,
      ending,
    })
    this.#done = new Promise((r) => {
      this.#finish = r
    })
  }

  get speaking(): boolean {
    return this.#speakingWatch.speaking
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

  /**
   * Opens the first connection and runs until the session ends; resolves with a summary. With
   * `confirm`, the model's input transcription must confirm the wake phrase first: until then
   * nothing it does reaches the room, and without it the session ends as `unconfirmed`.
   */
  async run(preRoll: readonly Uint8Array[] = [], confirm?: WakeCheck): Promise<SessionSummary> {
    if (confirm) {
      this.#confirmation = new WakeConfirmation(confirm, this.#deps.clock, (ok, heard) =>
        this.#onWakeDecided(ok, heard),
      )
    }
    this.#runner.logCapabilities()
    this.#uplink.preRoll(preRoll)
    this.#timers.start()
    // The microphone and the connection start together: frames before the open are kept.
    const micStarted = Promise.resolve()
      .then(() =>
        this.#deps.mic.start({
          frame: (pcm) => this.#uplink.frame(pcm),
          error: (err, recoverable) => {
            if (recoverable) {
              // A recorder hiccup: the source restarts itself and the session rides through it;
              // what the room said meanwhile is lost, the conversation is not.
              this.#log.warn(
                { event: 'voice_microphone_restarting', err: errorText(err) },
                'voice microphone restarting',
              )
              return
            }
            this.#log.error({ event: 'mic_failed', err: errorText(err) }, 'voice microphone failed')
            this.#fail()
          },
        }),
      )
      .then(
        () => true,
        (err: unknown) => {
          this.#log.error(
            { event: 'mic_start_failed', err: errorText(err) },
            'voice microphone would not start',
          )
          return false
        },
      )
    const [micOk, connected] = await Promise.all([micStarted, this.#link.connect('fresh')])
    // A first connection lost while opening is already being replaced by the keeper's reconnect.
    if (!this.#ending && (!micOk || (!connected && !this.#link.reconnecting))) this.#fail()
    return this.#done
  }

  /** Mute: no frame leaves (the MicGate sees to that); the provider is told the stream ended. */
  muted(): void {
    this.#uplink.muted()
  }

  /** The long press: stop speaking now, without muting and without cancelling anything. */
  stopSpeaking(): void {
    const r = this.#deps.speaker.drop()
    this.#log.info(
      { discardedMs: r.discardedMs, playedMs: r.playedMs, why: 'stop button' },
      'voice playback dropped',
    )
    this.#link.liveSession?.playbackCut(r)
    if (this.#turns.inTurn) this.#suppressReply = true
    // Also after the turn completed: a long answer is whole seconds before it has played.
    if (r.discardedMs > 0 || this.#turns.inTurn) this.#transcript.cutReply()
    this.#speakingWatch.check()
  }

  /** Ends the session cleanly: approvals withdrawn, transcript complete, connection closed. */
  async end(reason: SessionEndReason): Promise<SessionSummary> {
    if (this.#ending) return this.#done
    this.#ending = true
    const { clock } = this.#deps
    this.#log.info(
      { reason, waitingForApproval: this.#calls.waitingForApproval() },
      'voice session ending',
    )
    this.#timers.stop()
    const unconfirmed = reason === 'unconfirmed' || this.#confirmation?.pending === true
    this.#confirmation?.stop()
    this.#held = []
    this.#link.cancelResume()
    this.#speakingWatch.stop()
    this.#transcript.flush()
    // Nobody will hear these answers: withdraw them, so no phone keeps asking.
    this.#calls.endSession()
    const conns = this.#link.retireAll()
    this.#hooks.changed()
    await Promise.all([
      ...conns.map((c) => this.#link.closeQuietly(c)),
      Promise.resolve()
        .then(() => this.#deps.mic.stop())
        .catch((err: unknown) => {
          this.#log.warn(
            { event: 'voice_microphone_stop_failed', err: errorText(err) },
            'voice microphone stop failed',
          )
        }),
      this.#runner.drain(),
    ])
    this.#runner.abandonUnsettled()
    const counts = this.#calls.counts()
    const summary: SessionSummary = {
      conversationId: this.conversationId,
      reason,
      startedAt: this.#startedAt,
      endedAt: clock.now(),
      turns: this.#turns.current,
      calls: { answered: counts.answered, withdrawn: counts.withdrawn },
      resumptions: this.#link.resumptions,
      freshConnections: this.#link.freshConnections,
      messagesWritten: this.#transcript.written,
      unconfirmed,
      tokens: this.#tokens,
    }
    this.#recordUsage(summary)
    this.#log.info({ ...summary }, 'voice session ended')
    this.#finish(summary)
    return summary
  }

  /** What the session cost goes beside its conversation; a store that cannot take it loses only that. */
  #recordUsage(summary: SessionSummary): void {
    if (summary.tokens === 0) return
    try {
      this.#deps.store.recordUsage(this.conversationId, summary.tokens, summary.endedAt)
    } catch (err) {
      this.#log.warn(
        { event: 'usage_not_recorded', tokens: summary.tokens, err: errorText(err) },
        'token usage of the session not recorded',
      )
    }
  }

  #fail(): void {
    this.#error = true
    void this.end('error')
  }

  // ---- provider events ------------------------------------------------------------------

  #eventsFor(conn: Connection): LiveEvents {
    // False for an event from a connection already retired: it is logged and dropped.
    const stillLive = (what: string): boolean => {
      if (!conn.retired) return true
      this.#log.debug(
        { event: 'retired_connection_event', connection: conn.n, liveEvent: what },
        'voice event from a closed connection',
      )
      return false
    }
    const link = this.#link
    // Before the wake is confirmed, what the model does waits (in order) rather than happening.
    const held = (what: string, act: () => void): void => {
      if (!stillLive(what)) return
      if (this.#confirmation?.pending) this.#held.push(() => stillLive(what) && act())
      else act()
    }
    return {
      audio: (pcm) => held('audio', () => this.#onAudio(pcm)),
      inputTranscription: (text) => {
        if (!stillLive('inputTranscription')) return
        // Heard first: the text that confirms the wake releases what came before it, then itself.
        this.#confirmation?.heard(text)
        if (this.#confirmation?.pending) this.#held.push(() => this.#onUserText(text))
        else this.#onUserText(text)
      },
      outputTranscription: (text) => held('outputTranscription', () => this.#onModelText(text)),
      interrupted: () => held('interrupted', () => this.#onInterrupted()),
      generationComplete: () => held('generationComplete', () => this.#onGenerationComplete()),
      turnComplete: () => held('turnComplete', () => this.#onTurnComplete()),
      toolCall: (calls) => held('toolCall', () => this.#onToolCall(conn, calls)),
      toolCallCancellation: (ids) =>
        held('toolCallCancellation', () => this.#runner.onCancellation(ids)),
      goAway: (ms) => stillLive('goAway') && link.onGoAway(ms),
      resumptionUpdate: (h, r) => stillLive('resumptionUpdate') && link.onResumption(h, r),
      // Each usage frame counts one turn (per turn, not a running total: measured upstream).
      usage: (tokens) => {
        if (stillLive('usage')) this.#tokens += tokens
      },
      closed: (info) => link.onClosed(conn, info),
    }
  }

  #onWakeDecided(confirmed: boolean, heard: string): void {
    if (!confirmed) {
      this.#log.info(
        { event: 'false_wake', heardChars: heard.length },
        'the model did not hear the wake phrase: closing without a word',
      )
      this.#held = []
      void this.end('unconfirmed')
      return
    }
    this.#log.info({ heldEvents: this.#held.length }, 'wake phrase confirmed by the model')
    const held = this.#held
    this.#held = []
    for (const act of held) act()
  }

  #onAudio(pcm: Uint8Array): void {
    this.#afterBargeIn = false
    this.#noteTurnActivity('model_output')
    if (this.#suppressReply) return
    this.#transcript.modelOutput()
    this.#timers.activity()
    this.#deps.speaker.write(pcm)
    this.#speakingWatch.wrote()
  }

  #onUserText(text: string): void {
    if (text.trim() !== '') this.#noteTurnActivity('user_speech')
    this.#timers.activity()
    this.#transcript.userText(text)
  }

  #onModelText(text: string): void {
    if (this.#afterBargeIn) {
      this.#log.debug({ chars: text.length }, 'voice late transcription of a cut reply dropped')
      return
    }
    if (text.trim() !== '') this.#noteTurnActivity('model_output')
    this.#timers.activity()
    this.#transcript.modelText(text)
  }

  /** User speech or model output was seen: it may open a turn (the turn counter decides). */
  #noteTurnActivity(kind: 'user_speech' | 'model_output'): void {
    const started = this.#turns.signal(kind)
    if (started !== undefined) this.#log.debug({ turn: started, by: kind }, 'voice turn started')
  }

  #onInterrupted(): void {
    // First, before anything else: what is buffered for the speaker is stale.
    const r = this.#deps.speaker.drop()
    this.#log.info(
      { discardedMs: r.discardedMs, playedMs: r.playedMs, why: 'barge-in' },
      'voice playback dropped',
    )
    this.#link.liveSession?.playbackCut(r)
    this.#suppressReply = false
    this.#afterBargeIn = true
    this.#transcript.interrupted()
    this.#turns.end()
    this.#speakingWatch.check()
  }

  /** The model's audio for this reply is all here: the speaker plays out its tail now. */
  #onGenerationComplete(): void {
    this.#deps.speaker.endOfReply()
  }

  #onTurnComplete(): void {
    // Also here: not every model sends generationComplete before turnComplete.
    this.#deps.speaker.endOfReply()
    if (!this.#turns.end()) {
      this.#log.debug(
        { event: 'turn_complete_without_turn', turn: this.#turns.current },
        'voice turnComplete with no turn open',
      )
    }
    this.#suppressReply = false
    this.#afterBargeIn = false
    this.#transcript.turnComplete(this.#deps.speaker.queuedMs() > 0)
    this.#link.turnEnded()
  }

  #onToolCall(conn: Connection, calls: readonly LiveToolCall[]): void {
    this.#noteTurnActivity('model_output')
    this.#timers.activity()
    this.#runner.onToolCall(conn, calls)
  }
}
