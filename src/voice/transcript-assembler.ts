import type { NewMessage, ToolCallRecord, ToolOutcome } from '../core/conversation.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import type { InputPlace } from '../ports/live-llm.js'
import type { TranscriptStore } from '../ports/transcript-store.js'
import { ReplyHold } from './reply-hold.js'

/** How long a reply that began without its words keeps its record back for them. */
const LATE_WORDS_BOUND_MS = 3000

/**
 * Turns the provider's transcriptions into an ordinary chat (docs/voice-driver.md, rule 8): user words and model
 * replies become user and assistant messages, in the order they were said, with tool calls and
 * outcomes between them. A reply cut by barge-in is discarded; the words that cut it are kept.
 *
 * Transcriptions arrive in pieces and are not ordered against each other, so text is buffered and
 * written when its place is certain: the user's words when the model starts replying, the reply
 * when its turn completes and the speaker has played it. The model's audio arrives faster than it
 * plays, so a long answer's turn is complete seconds before the room has heard it; a drop in that
 * time (the wake phrase or the long press over it) cuts a reply that is already whole. Tool calls
 * are written at once (as an assistant message without text), because a fast tool's outcome must
 * find its call already in the chat.
 *
 * A provider may transcribe the person after the reply has begun, saying so (`beforeReply`,
 * `LiveCapabilities.lateTranscription`): a reply that began with no words before it keeps its record
 * back (`ReplyHold`, bounded) until they come, and they are written first. On any other provider
 * nothing is held. Words without that mark, said during a reply, still come after it.
 */
export class TranscriptAssembler {
  readonly #store: TranscriptStore
  readonly #conversationId: string
  readonly #clock: Clock
  readonly #log: Logger
  /** User words said before the current reply began (or with no reply in progress). */
  #userBefore = ''
  /** User words said while a reply was in progress: a barge-in, or the next question. */
  #userAfter = ''
  #reply = ''
  #replying = false
  /** The reply was cut on the device (the stop button): it will not be kept. */
  #replyCut = false
  /** A complete reply the speaker is still playing: written once played out, dropped if cut. */
  #playing = ''
  #written = 0
  /** The user's last words already written, for `lastWords` once the buffers are empty. */
  #lastWritten = ''
  /** The reply in progress began before its words were known: its record waits for them. */
  readonly #hold: ReplyHold
  /** The reply in progress began with no words before it: the words written so far are not its. */
  #wordless = false
  /** The provider may mark words late (`LiveCapabilities.lateTranscription`): only then is a reply held. */
  readonly #lateWords: () => boolean

  constructor(deps: {
    store: TranscriptStore
    conversationId: string
    clock: Clock
    log: Logger
    lateWords: () => boolean
  }) {
    this.#store = deps.store
    this.#lateWords = deps.lateWords
    this.#conversationId = deps.conversationId
    this.#clock = deps.clock
    this.#log = deps.log
    this.#hold = new ReplyHold(deps.clock, LATE_WORDS_BOUND_MS, () => this.#releaseHold('bound'))
  }

  /** Messages written so far. */
  get written(): number {
    return this.#written
  }

  /**
   * The last thing said in the room: the words still buffered (said during or before the reply
   * in progress), else the last user message written. What a tool call's approval shows as the
   * words that led to it.
   */
  lastWords(): string | undefined {
    // The reply began before its words were known (a transcription still on its way, on any
    // provider): the last words written belong to an earlier turn, and a phone asked to approve
    // must not be shown them as what led to this call.
    const earlier = this.#wordless ? '' : this.#userBefore.trim() || this.#lastWritten
    const words = this.#userAfter.trim() || earlier
    return words === '' ? undefined : words
  }

  /** The person's words; `place.beforeReply`: late words of the turn the reply answers. */
  userText(text: string, place?: InputPlace): void {
    if (place?.beforeReply) this.#wordsBeforeReply(text.trim())
    else if (this.#replying) this.#userAfter += text
    else this.#userBefore += text
  }

  modelText(text: string): void {
    this.#beginReply()
    this.#reply += text
  }

  /** Model audio with or without a transcription: a reply has begun. */
  modelOutput(): void {
    this.#beginReply()
  }

  toolCalls(calls: readonly ToolCallRecord[]): void {
    this.#beginReply()
    this.#append({
      role: 'assistant',
      text: '',
      toolCalls: calls,
      channel: 'voice',
      at: this.#clock.now(),
    })
  }

  toolOutcome(call: ToolCallRecord, outcome: ToolOutcome): void {
    this.#append({
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      args: call.args,
      outcome,
      channel: 'voice',
      at: this.#clock.now(),
    })
  }

  /**
   * The reply is complete: kept once heard (now, if `stillPlaying` is false, else at `playedOut`);
   * words said during it come next.
   */
  turnComplete(stillPlaying: boolean): void {
    if (!this.#replying) return
    if (this.#replyCut) this.#discardReply('stopped on the device')
    else if (stillPlaying) this.#playing = this.#reply.trim()
    else this.#writeReply()
    this.#endReply()
  }

  /** The speaker has played out what it had: the reply it was playing was heard. */
  playedOut(): void {
    this.#writePlaying()
  }

  /** Barge-in: the half-spoken reply is discarded, the user's words are kept. */
  interrupted(): void {
    this.#dropPlaying('barge-in')
    if (!this.#replying) return
    this.#discardReply('barge-in')
    this.#endReply()
  }

  /**
   * Playback was dropped on the device (the stop button, the wake phrase over a reply): the rest
   * of this reply is not heard, nor the end of a complete one still playing.
   */
  cutReply(): void {
    this.#dropPlaying('stopped on the device')
    if (this.#replying) this.#replyCut = true
  }

  /** Session end (or a fresh connection): write whatever is certain. */
  flush(): void {
    this.#releaseHold('flush')
    this.#writePlaying()
    this.#writeUser()
    if (this.#replying) {
      if (this.#replyCut) this.#discardReply('stopped on the device')
      else this.#writeReply()
    }
    this.#endReply()
    this.#writeUser()
  }

  #beginReply(): void {
    if (this.#replying) return
    // A new turn: the last one's late words, if they never came, are not waited for any more.
    this.#releaseHold('next reply')
    // A new reply behind one still playing: the room is hearing that one now.
    this.#writePlaying()
    const hadWords = this.#writeUser()
    this.#replying = true
    this.#wordless = !hadWords
    if (this.#wordless && this.#lateWords()) this.#hold.start()
  }

  /**
   * Late words of the turn the reply answers: written now, before the reply's held record and
   * before the reply itself if it is still being made or played (it is written later). Empty: the
   * provider knows there are none (a failed transcription); the hold ends all the same.
   */
  #wordsBeforeReply(words: string): void {
    if (words !== '') {
      this.#lastWritten = words
      this.#put({ role: 'user', text: words, channel: 'voice', at: this.#clock.now() })
    }
    this.#wordless = false
    this.#releaseHold('words')
  }

  #releaseHold(why: 'words' | 'bound' | 'next reply' | 'flush'): void {
    if (!this.#hold.holding) return
    const kept = this.#hold.release()
    if (why !== 'words') this.#log.debug({ why, kept: kept.length }, 'voice reply record let go')
    for (const m of kept) this.#put(m)
  }

  #endReply(): void {
    this.#replying = false
    this.#wordless = false
    this.#replyCut = false
    this.#reply = ''
    this.#userBefore += this.#userAfter
    this.#userAfter = ''
  }

  /** Writes the words said before the reply; false when there were none. */
  #writeUser(): boolean {
    const text = this.#userBefore.trim()
    this.#userBefore = ''
    if (text === '') return false
    this.#lastWritten = text
    this.#append({ role: 'user', text, channel: 'voice', at: this.#clock.now() })
    return true
  }

  #writeReply(): void {
    const text = this.#reply.trim()
    this.#reply = ''
    this.#writeAssistant(text)
  }

  #writeAssistant(text: string): void {
    if (text === '') return
    this.#append({
      role: 'assistant',
      text,
      toolCalls: [],
      channel: 'voice',
      at: this.#clock.now(),
    })
  }

  #discardReply(why: string): void {
    this.#discarded(this.#reply.trim().length, why)
    this.#reply = ''
  }

  #writePlaying(): void {
    const text = this.#playing
    this.#playing = ''
    this.#writeAssistant(text)
  }

  #dropPlaying(why: string): void {
    this.#discarded(this.#playing.length, why)
    this.#playing = ''
  }

  #discarded(chars: number, why: string): void {
    if (chars > 0) this.#log.info({ why, chars }, 'voice reply discarded from transcript')
  }

  #append(message: NewMessage): void {
    // Anything written after a reply still playing comes after it: that reply was heard first.
    if (this.#playing !== '') this.#writePlaying()
    if (this.#hold.holding) this.#hold.keep(message)
    else this.#put(message)
  }

  #put(message: NewMessage): void {
    try {
      this.#store.append(this.#conversationId, message)
      this.#written++
    } catch (err) {
      // A failing store must not take the conversation down with it; the gap is logged.
      this.#log.error(
        { event: 'voice_transcript_append_failed', role: message.role, err: errorText(err) },
        'voice transcript append failed',
      )
    }
  }
}
