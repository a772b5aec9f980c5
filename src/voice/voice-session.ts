import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { CallLedger } from './call-ledger.js'
import { ConnectionKeeper } from './connection-keeper.js'
import { MicUplink } from './mic-uplink.js'
import { ProviderEvents } from './provider-events.js'
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
import type { WakeCheck } from './wake-confirmation.js'

/**
 * One spoken session: opens the connection, wires provider events to the speaker, the tools and
 * the transcript, resumes across `goAway`, and ends on budget, idle, error or request. The audio
 * path — microphone frame → `sendAudio`, model audio → `speaker.write`, `interrupted` → `drop` —
 * never awaits anything; every tool call runs as its own task.
 *
 * The connections and their resumption are the `ConnectionKeeper`'s, which only reports what
 * happened; the calls, their lineage and every answer that leaves are the `CallLedger`'s;
 * microphone audio the `MicUplink`'s, the tool-call tasks the `ToolCallRunner`'s, the speaking
 * light the `SpeakingWatch`'s; what the provider sends (and the wake confirmation that holds it)
 * the `ProviderEvents`'. What is left here is the wiring (who reacts to which connection event),
 * and the start and end.
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
  readonly #events: ProviderEvents
  #ending = false
  #error = false
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
      // The session's own provider (a failover pins one): asked when a reply begins.
      lateWords: () => deps.llm.capabilities.lateTranscription,
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
      events: (conn) => this.#events.for(conn),
      inTurn: () => this.#turns.inTurn,
      ending,
      fail: () => this.#fail(),
      listener: {
        opened: (conn, resumedFrom) => {
          // Quiet time counts only while the model can hear: the room is not idle because the
          // connection took long to open (a slow board, the SDK loading, a slow network).
          this.#timers.activity()
          this.#events.opened()
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
    this.#events = new ProviderEvents({
      log: this.#log,
      clock: deps.clock,
      speaker: deps.speaker,
      turns: this.#turns,
      transcript: this.#transcript,
      timers: this.#timers,
      speakingWatch: this.#speakingWatch,
      runner: this.#runner,
      link: this.#link,
      unconfirmed: () => void this.end('unconfirmed'),
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
    if (confirm) this.#events.confirmWake(confirm)
    this.#runner.logCapabilities()
    // The local check's refusal ends the session before anything left the room.
    const refused = () => void this.end('unconfirmed')
    this.#uplink.preRoll(
      preRoll,
      confirm?.local && {
        check: confirm.local,
        afterMs: confirm.localAfterMs ?? 0,
        refused,
        ...(confirm.localGates?.() === false && { shadow: true }),
      },
    )
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
    this.#events.stopSpeaking()
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
    const unconfirmed = reason === 'unconfirmed' || this.#events.confirming
    this.#events.stop()
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
      tokens: this.#events.tokens,
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
}
