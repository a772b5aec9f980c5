import type { ToolCallRecord, ToolOutcome } from '../core/conversation.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import type { TranscriptStore } from '../ports/transcript-store.js'

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

  constructor(deps: { store: TranscriptStore; conversationId: string; clock: Clock; log: Logger }) {
    this.#store = deps.store
    this.#conversationId = deps.conversationId
    this.#clock = deps.clock
    this.#log = deps.log
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
    const words = this.#userAfter.trim() || this.#userBefore.trim() || this.#lastWritten
    return words === '' ? undefined : words
  }

  userText(text: string): void {
    if (this.#replying) this.#userAfter += text
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
    // A new reply behind one still playing: the room is hearing that one now.
    this.#writePlaying()
    this.#writeUser()
    this.#replying = true
  }

  #endReply(): void {
    this.#replying = false
    this.#replyCut = false
    this.#reply = ''
    this.#userBefore += this.#userAfter
    this.#userAfter = ''
  }

  #writeUser(): void {
    const text = this.#userBefore.trim()
    this.#userBefore = ''
    if (text === '') return
    this.#lastWritten = text
    this.#append({ role: 'user', text, channel: 'voice', at: this.#clock.now() })
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

  #append(message: Parameters<TranscriptStore['append']>[1]): void {
    // Anything written after a reply still playing comes after it: that reply was heard first.
    if (this.#playing !== '') this.#writePlaying()
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
