import type { Logger } from '../core/logger.js'
import type { AudioOut } from '../ports/audio.js'
import type { Clock } from '../ports/clock.js'
import type { InputPlace, LiveEvents, LiveToolCall } from '../ports/live-llm.js'
import type { Connection, ConnectionKeeper } from './connection-keeper.js'
import type { SessionTimers } from './session-timers.js'
import type { SpeakingWatch } from './speaking-watch.js'
import type { ToolCallRunner } from './tool-call-runner.js'
import type { TranscriptAssembler } from './transcript-assembler.js'
import type { TurnCounter } from './turn-counter.js'
import { type WakeCheck, WakeConfirmation } from './wake-confirmation.js'

interface ProviderEventsDeps {
  readonly log: Logger
  readonly clock: Clock
  readonly speaker: AudioOut
  readonly turns: TurnCounter
  readonly transcript: TranscriptAssembler
  readonly timers: SessionTimers
  readonly speakingWatch: SpeakingWatch
  readonly runner: ToolCallRunner
  readonly link: ConnectionKeeper
  /** The model did not confirm the wake: the session ends `unconfirmed`. */
  readonly unconfirmed: () => void
}

/**
 * What the provider sends on a connection, turned into the session's reactions: model audio to the
 * speaker, words and turns to the transcript, tool calls to the runner, `goAway` and resumption
 * handles to the keeper. The reply they feed is cut here too (barge-in and the stop button), and,
 * for a session opened by a local wake, everything is held until the model confirms the phrase.
 * The audio path — model audio → `speaker.write`, `interrupted` → `drop` — never awaits anything.
 */
export class ProviderEvents {
  readonly #d: ProviderEventsDeps
  /** The stop button dropped this reply: the rest of it is not played either. */
  #suppressReply = false
  /**
   * Between `interrupted` and the next sign of a new generation (its audio, or `turnComplete`):
   * transcription arriving now is the tail of the cut reply (it is not ordered against the audio).
   */
  #afterBargeIn = false
  /** The second opinion on the wake that opened this session, while it is being asked. */
  #confirmation: WakeConfirmation | undefined
  /** What the model did before the wake was confirmed, replayed in order once it is. */
  #held: (() => void)[] = []
  /** Tokens billed so far, from the provider's usage reports. */
  #tokens = 0

  constructor(deps: ProviderEventsDeps) {
    this.#d = deps
  }

  get tokens(): number {
    return this.#tokens
  }

  /** True while the wake that opened the session is still unconfirmed. */
  get confirming(): boolean {
    return this.#confirmation?.pending === true
  }

  /** Holds what the model does until its input transcription has the wake phrase (`check`). */
  confirmWake(check: WakeCheck): void {
    this.#confirmation = new WakeConfirmation(check, this.#d.clock, (ok, heard) =>
      this.#onWakeDecided(ok, heard),
    )
  }

  /** A connection opened: the confirmation's deadline runs from the first. */
  opened(): void {
    this.#confirmation?.start()
  }

  /** The session ends: nothing held is released any more. */
  stop(): void {
    this.#confirmation?.stop()
    this.#held = []
  }

  /** The long press: stop speaking now, without muting and without cancelling anything. */
  stopSpeaking(): void {
    const { speaker, link, turns, transcript } = this.#d
    const r = speaker.drop()
    this.#d.log.info(
      { discardedMs: r.discardedMs, playedMs: r.playedMs, why: 'stop button' },
      'voice playback dropped',
    )
    link.liveSession?.playbackCut(r)
    if (turns.inTurn) this.#suppressReply = true
    // Also after the turn completed: a long answer is whole seconds before it has played.
    if (r.discardedMs > 0 || turns.inTurn) transcript.cutReply()
    this.#d.speakingWatch.check()
  }

  /** The events of one connection. */
  for(conn: Connection): LiveEvents {
    // False for an event from a connection already retired: it is logged and dropped.
    const stillLive = (what: string): boolean => {
      if (!conn.retired) return true
      this.#d.log.debug(
        { event: 'retired_connection_event', connection: conn.n, liveEvent: what },
        'voice event from a closed connection',
      )
      return false
    }
    const { link, runner } = this.#d
    // Before the wake is confirmed, what the model does waits (in order) rather than happening.
    const held = (what: string, act: () => void): void => {
      if (!stillLive(what)) return
      if (this.#confirmation?.pending) this.#held.push(() => stillLive(what) && act())
      else act()
    }
    return {
      audio: (pcm) => held('audio', () => this.#onAudio(pcm)),
      inputTranscription: (text, place) => {
        if (!stillLive('inputTranscription')) return
        // Heard first: the text that confirms the wake releases what came before it, then itself.
        this.#confirmation?.heard(text)
        if (this.#confirmation?.pending) this.#held.push(() => this.#onUserText(text, place))
        else this.#onUserText(text, place)
      },
      outputTranscription: (text) => held('outputTranscription', () => this.#onModelText(text)),
      interrupted: () => held('interrupted', () => this.#onInterrupted()),
      generationComplete: () => held('generationComplete', () => this.#onGenerationComplete()),
      turnComplete: () => held('turnComplete', () => this.#onTurnComplete()),
      toolCall: (calls) => held('toolCall', () => this.#onToolCall(conn, calls)),
      toolCallCancellation: (ids) => held('toolCallCancellation', () => runner.onCancellation(ids)),
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
      this.#d.log.info(
        { event: 'false_wake', heardChars: heard.length },
        'the model did not hear the wake phrase: closing without a word',
      )
      this.#held = []
      this.#d.unconfirmed()
      return
    }
    this.#d.log.info({ heldEvents: this.#held.length }, 'wake phrase confirmed by the model')
    const held = this.#held
    this.#held = []
    for (const act of held) act()
  }

  #onAudio(pcm: Uint8Array): void {
    this.#afterBargeIn = false
    this.#noteTurnActivity('model_output')
    if (this.#suppressReply) return
    this.#d.transcript.modelOutput()
    this.#d.timers.activity()
    this.#d.speaker.write(pcm)
    this.#d.speakingWatch.wrote()
  }

  #onUserText(text: string, place: InputPlace | undefined): void {
    // Late words of the turn being answered start no new turn: that would make its calls' answers
    // look late (rule 4).
    if (text.trim() !== '' && !place?.beforeReply) this.#noteTurnActivity('user_speech')
    this.#d.timers.activity()
    this.#d.transcript.userText(text, place)
  }

  #onModelText(text: string): void {
    if (this.#afterBargeIn) {
      this.#d.log.debug({ chars: text.length }, 'voice late transcription of a cut reply dropped')
      return
    }
    if (text.trim() !== '') this.#noteTurnActivity('model_output')
    this.#d.timers.activity()
    this.#d.transcript.modelText(text)
  }

  /** User speech or model output was seen: it may open a turn (the turn counter decides). */
  #noteTurnActivity(kind: 'user_speech' | 'model_output'): void {
    const started = this.#d.turns.signal(kind)
    if (started !== undefined) this.#d.log.debug({ turn: started, by: kind }, 'voice turn started')
  }

  #onInterrupted(): void {
    // First, before anything else: what is buffered for the speaker is stale.
    const r = this.#d.speaker.drop()
    this.#d.log.info(
      { discardedMs: r.discardedMs, playedMs: r.playedMs, why: 'barge-in' },
      'voice playback dropped',
    )
    this.#d.link.liveSession?.playbackCut(r)
    this.#suppressReply = false
    this.#afterBargeIn = true
    this.#d.transcript.interrupted()
    this.#d.turns.end()
    this.#d.speakingWatch.check()
  }

  /** The model's audio for this reply is all here: the speaker plays out its tail now. */
  #onGenerationComplete(): void {
    this.#d.speaker.endOfReply()
  }

  #onTurnComplete(): void {
    const { speaker, turns } = this.#d
    // Also here: not every model sends generationComplete before turnComplete.
    speaker.endOfReply()
    if (!turns.end()) {
      this.#d.log.debug(
        { event: 'turn_complete_without_turn', turn: turns.current },
        'voice turnComplete with no turn open',
      )
    }
    this.#suppressReply = false
    this.#afterBargeIn = false
    this.#d.transcript.turnComplete(speaker.queuedMs() > 0)
    this.#d.link.turnEnded()
  }

  #onToolCall(conn: Connection, calls: readonly LiveToolCall[]): void {
    this.#noteTurnActivity('model_output')
    this.#d.timers.activity()
    this.#d.runner.onToolCall(conn, calls)
  }
}
