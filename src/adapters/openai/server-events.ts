import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type { LiveEvents } from '../../ports/live-llm.js'
import type { PlayedAudio } from './played-audio.js'
import type { ResponseQueue } from './response-queue.js'

/** 24 kHz, 16-bit mono. */
const BYTES_PER_MS = 48
/** Committed user items whose transcription is awaited, at most (a few utterances' worth). */
const UNTRANSCRIBED_KEPT = 8

interface ServerEventsOptions {
  readonly events: LiveEvents
  readonly log: Logger
  readonly clock: Clock
  readonly responses: ResponseQueue
  readonly played: PlayedAudio
  /** The model called a tool (the connection keeps its name and arguments). */
  readonly toolCall: (id: string, name: string, args: string) => void
  readonly cancel: () => void
  /** A response ended or the user stopped speaking: maybe a quiet moment. */
  readonly quiet: () => void
}

/**
 * Realtime server events → the port's events. The mapping that is not one to one:
 *
 * - `input_audio_buffer.speech_started` while a reply is being made or may still be playing is
 *   `interrupted` (the server's VAD cancels the response itself; the speaker drop and the
 *   truncation follow from the driver's `playbackCut`). Audio of a cut response that is still on
 *   its way is dropped here.
 * - `response.done` is `generationComplete`, and `turnComplete` unless the response ended in a
 *   function call: the model's words about that call (after its output) belong to the same turn,
 *   so an answer nobody moved on from is still `INTERRUPT`. The user speaking closes that turn.
 * - `response.function_call_arguments.done` is one `toolCall`; the provider never withdraws a call.
 * - Input transcription is asynchronous: a user item committed before a response was created may
 *   be transcribed after that response began. Its words are then `inputTranscription(text,
 *   { beforeReply: true })`, so the chat has them before the reply they led to; a failed one is
 *   `('', { beforeReply: true })`: no words are coming.
 */
export class ServerEvents {
  readonly #o: ServerEventsOptions
  /** The response being made, from `response.created` to `response.done`. */
  #responseId: string | undefined
  /** Responses whose audio nobody will hear: cut by the room or the stop button. */
  readonly #cut = new Set<string>()
  /** The server's VAD cancels this one itself (`interrupt_response`). */
  #cancelledByServer: string | undefined
  #responseHadCall = false
  /** A response ended in a call and its turn is not complete yet. */
  #callTurnOpen = false
  /** When the audio handed to the speaker so far will have played, at the earliest. */
  #playingUntil = 0
  #userSpeaking = false
  #stopped = false
  /** User items committed and not yet transcribed; `answered`: a response was created after it. */
  readonly #untranscribed = new Map<string, { answered: boolean }>()

  constructor(o: ServerEventsOptions) {
    this.#o = o
  }

  get userSpeaking(): boolean {
    return this.#userSpeaking
  }

  /** The connection is closing: nothing more is reported. */
  stop(): void {
    this.#stopped = true
  }

  /** The speaker dropped the reply: the rest of it is neither played nor made. */
  cut(): void {
    this.#playingUntil = 0
    const id = this.#responseId
    if (id === undefined || this.#cut.has(id)) return
    this.#cut.add(id)
    if (this.#cancelledByServer !== id) this.#o.cancel()
  }

  dispatch(e: RealtimeServerEvent): void {
    if (this.#stopped) return
    try {
      this.#dispatch(e)
    } catch (err) {
      this.#o.log.error(
        { event: 'realtime_event_failed', type: e.type, err: errorText(err) },
        'realtime event could not be handled; dropped',
      )
    }
  }

  #dispatch(e: RealtimeServerEvent): void {
    switch (e.type) {
      case 'input_audio_buffer.speech_started':
        this.#speechStarted()
        return
      case 'input_audio_buffer.speech_stopped':
        this.#userSpeaking = false
        this.#o.responses.speechStopped()
        this.#o.quiet()
        return
      case 'input_audio_buffer.committed':
        this.#committed(e.item_id)
        return
      case 'conversation.item.input_audio_transcription.completed':
        this.#transcribed(e.item_id, e.transcript)
        return
      case 'conversation.item.input_audio_transcription.failed':
        this.#o.log.warn(
          { event: 'realtime_transcription_failed', item: e.item_id, why: e.error?.message },
          'realtime input transcription failed',
        )
        if (this.#untranscribed.get(e.item_id)?.answered) this.#transcribed(e.item_id, '')
        else this.#untranscribed.delete(e.item_id)
        return
      case 'response.created':
        for (const item of this.#untranscribed.values()) item.answered = true
        this.#responseId = e.response.id
        this.#responseHadCall = false
        this.#o.responses.started()
        return
      case 'response.output_audio.delta': {
        if (this.#cut.has(e.response_id)) return
        const pcm = Buffer.from(e.delta, 'base64')
        this.#o.played.delivered(e.item_id, pcm.byteLength)
        const now = this.#o.clock.now()
        this.#playingUntil = Math.max(this.#playingUntil, now) + pcm.byteLength / BYTES_PER_MS
        this.#o.events.audio(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength))
        return
      }
      case 'response.output_audio_transcript.delta':
        if (!this.#cut.has(e.response_id)) this.#o.events.outputTranscription(e.delta)
        return
      case 'response.function_call_arguments.done':
        this.#responseHadCall = true
        this.#o.toolCall(e.call_id, e.name, e.arguments)
        this.#o.events.toolCall([{ id: e.call_id, name: e.name, args: parseArgs(e.arguments) }])
        return
      case 'response.done':
        this.#responseDone(e)
        return
      case 'error':
        this.#error(e)
        return
      case 'conversation.item.truncated':
        this.#o.log.debug({ item: e.item_id, audioEndMs: e.audio_end_ms }, 'realtime truncated')
        return
      default:
        return
    }
  }

  #committed(itemId: string): void {
    this.#untranscribed.set(itemId, { answered: false })
    // Without transcription asked for, nothing ever removes them: keep only the newest few.
    if (this.#untranscribed.size > UNTRANSCRIBED_KEPT) {
      const oldest = this.#untranscribed.keys().next().value
      if (oldest !== undefined) this.#untranscribed.delete(oldest)
    }
  }

  #transcribed(itemId: string, text: string): void {
    const answered = this.#untranscribed.get(itemId)?.answered === true
    this.#untranscribed.delete(itemId)
    if (answered) this.#o.events.inputTranscription(text, { beforeReply: true })
    else this.#o.events.inputTranscription(text)
  }

  #speechStarted(): void {
    this.#userSpeaking = true
    this.#o.responses.speechStarted()
    if (this.#callTurnOpen) {
      // The turn that ended in a call is over: these words start the next one.
      this.#callTurnOpen = false
      this.#o.events.turnComplete()
    }
    const id = this.#responseId
    const playing = this.#o.clock.now() < this.#playingUntil
    if (id === undefined && !playing) return
    if (id !== undefined) this.#cancelledByServer = id
    this.#o.events.interrupted()
  }

  #responseDone(e: Extract<RealtimeServerEvent, { type: 'response.done' }>): void {
    const r = e.response
    if (r.id && r.id === this.#responseId) this.#responseId = undefined
    else if (this.#responseId !== undefined && !r.id) this.#responseId = undefined
    if (r.id) this.#cut.delete(r.id)
    const tokens = r.usage?.total_tokens
    if (typeof tokens === 'number' && tokens > 0) this.#o.events.usage(tokens)
    this.#o.events.generationComplete()
    if (this.#responseHadCall && r.status !== 'cancelled') {
      this.#callTurnOpen = true
    } else {
      this.#callTurnOpen = false
      this.#o.events.turnComplete()
    }
    this.#o.responses.done()
    this.#o.quiet()
  }

  #error(e: Extract<RealtimeServerEvent, { type: 'error' }>): void {
    const { code, message, event_id: eventId } = e.error
    const ours = typeof eventId === 'string' && eventId.startsWith('nocturn_response_')
    if (ours && code === 'conversation_already_has_active_response') {
      // Another response (the server's VAD) got there first: ours waits for it, never dropped.
      this.#o.log.debug({ eventId }, 'realtime response.create bounced; queued again')
      this.#o.responses.bounced()
      return
    }
    if (code === 'response_cancel_not_active') return
    if (ours) this.#o.responses.failed()
    this.#o.log.warn(
      { event: 'realtime_error', code, eventId, why: message },
      'realtime service reported an error',
    )
  }
}

/** The model's arguments are a JSON string; one that does not parse goes on as it is (the ToolSet refuses it). */
function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text || '{}')
  } catch {
    return text
  }
}
