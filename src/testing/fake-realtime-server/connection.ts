import WebSocket from 'ws'
import { type Item, nextId } from './item.js'
import { FakeResponse, type Reply } from './response.js'
import { FakeTranscriber } from './transcriber.js'

/** A client event as the fake received it. */
export interface ClientEvent {
  readonly type: string
  readonly [key: string]: unknown
}

/**
 * One Realtime WebSocket, as the service keeps it (written from OpenAI's Realtime API reference):
 * the session, the conversation's items, at most one response at a time. A test plays the model
 * and the room with the shorthands (`user`, `reply`, `speechStarted`, `finish`); everything the
 * client sends is recorded and checked as the service checks it: a `response.create` while a
 * response is active, a function output for a call that does not exist, a truncation past the
 * audio or of an item without audio are `error` events, as there.
 */
export class FakeRealtimeConnection {
  readonly index: number
  /** The session as the client's `session.update`s left it. */
  session: Record<string, unknown> = {}
  readonly received: ClientEvent[] = []
  /** Every `error` event sent back (the client's protocol mistakes). */
  readonly errors: { code: string; eventId?: string }[] = []
  /** Replies for the client's own `response.create`s, in order; a short "OK." when empty. */
  readonly replies: Reply[] = []
  readonly items: Item[] = []
  #response: FakeResponse | undefined
  /** `response.create`s waiting for a blocking model's calls to have their outputs. */
  #deferred = 0
  #heardBytes = 0
  readonly #transcriber = new FakeTranscriber((event) => this.send(event))
  readonly #ws: WebSocket
  readonly #blocking: boolean
  readonly #wake: () => void

  constructor(index: number, ws: WebSocket, o: { blocking: boolean; wake: () => void }) {
    this.index = index
    this.#ws = ws
    this.#blocking = o.blocking
    this.#wake = o.wake
  }

  get open(): boolean {
    return this.#ws.readyState === WebSocket.OPEN
  }

  /** A response is being made. */
  get responding(): boolean {
    return this.#response !== undefined
  }

  /** Milliseconds of 24 kHz microphone audio received. */
  get heardMs(): number {
    return this.#heardBytes / 48
  }

  /** Every client event of one type, in order. */
  eventsOf(type: string): ClientEvent[] {
    return this.received.filter((e) => e.type === type)
  }

  /** The outputs the client gave, `{callId, output}` with the output parsed. */
  get outputs(): { callId: string; output: unknown }[] {
    return this.eventsOf('conversation.item.create')
      .map((e) => e.item as { type: string; call_id: string; output: string })
      .filter((i) => i.type === 'function_call_output')
      .map((i) => ({ callId: i.call_id, output: JSON.parse(i.output) as unknown }))
  }

  send(event: Record<string, unknown>): void {
    if (this.open) this.#ws.send(JSON.stringify({ event_id: nextId('event'), ...event }))
  }

  close(code = 1000, reason = ''): void {
    this.#ws.close(code, reason)
  }

  /** No close frame: the client sees 1006, as when a network drops. */
  drop(): void {
    this.#ws.terminate()
  }

  // ---- the room ---------------------------------------------------------------------------

  speechStarted(): void {
    this.send({
      type: 'input_audio_buffer.speech_started',
      audio_start_ms: 0,
      item_id: nextId('item'),
    })
    const r = this.#response
    const vad = turnDetection(this.session)
    if (r && vad?.interrupt_response !== false) this.#endResponse('cancelled')
  }

  speechStopped(): void {
    this.send({
      type: 'input_audio_buffer.speech_stopped',
      audio_end_ms: 0,
      item_id: nextId('item'),
    })
  }

  /**
   * The person says `text`: speech starts and stops, the buffer is committed as a user item, and
   * its transcription follows — only if the session asked for one, as the service does. The
   * service transcribes asynchronously, so it may come after the reply has begun: with
   * `transcription: 'late'` it waits for `transcribe()`.
   */
  user(text: string, o: { transcription?: 'at once' | 'late' } = {}): void {
    this.speechStarted()
    this.speechStopped()
    const previous = this.items.at(-1)?.id ?? null
    const item: Item = {
      id: nextId('item'),
      type: 'message',
      role: 'user',
      audioMs: 0,
      transcript: text,
    }
    this.items.push(item)
    this.send({
      type: 'input_audio_buffer.committed',
      item_id: item.id,
      previous_item_id: previous,
    })
    this.send({
      type: 'conversation.item.added',
      item: { id: item.id, type: 'message', role: 'user', content: [{ type: 'input_audio' }] },
    })
    const audio = this.session.audio as { input?: { transcription?: unknown } } | undefined
    if (!audio?.input?.transcription) {
      this.errors.push({ code: 'fake: transcription not asked for' })
      return
    }
    this.#transcriber.said(item.id, text, o.transcription === 'late')
  }

  /** The late transcriptions (`user(…, { transcription: 'late' })`) arrive now. */
  transcribe(): void {
    this.#transcriber.arrive()
  }

  // ---- the model --------------------------------------------------------------------------

  /** The model answers (as its VAD would after the person spoke). One response at a time. */
  reply(reply: Reply): void {
    if (this.#response) throw new Error('fake realtime: a response is already active')
    this.#startResponse(reply)
  }

  /** The held response's end: transcript, calls, `response.done`. */
  finish(): void {
    const r = this.#response
    if (!r) throw new Error('fake realtime: no response to finish')
    this.#finishResponse(r)
  }

  #endResponse(status: 'completed' | 'cancelled'): void {
    const r = this.#response
    if (!r) return
    this.#response = undefined
    r.done(status)
    this.#wake()
    this.#serveDeferred()
  }

  #startResponse(reply: Reply): void {
    const r = new FakeResponse(reply, this.items, (event) => this.send(event))
    this.#response = r
    r.start()
    if (!reply.hold) this.#finishResponse(r)
  }

  #finishResponse(r: FakeResponse): void {
    r.finish()
    this.#endResponse('completed')
  }

  // ---- what the client sends --------------------------------------------------------------

  onClientEvent(e: ClientEvent): void {
    this.received.push(e)
    switch (e.type) {
      case 'session.update':
        this.session = { ...this.session, ...(e.session as Record<string, unknown>) }
        this.send({ type: 'session.updated', session: this.session })
        return
      case 'input_audio_buffer.append':
        this.#heardBytes += Buffer.from(String(e.audio), 'base64').length
        return
      case 'conversation.item.create':
        this.#createItem(e)
        return
      case 'response.create':
        if (this.#response) {
          this.#error(
            e,
            'conversation_already_has_active_response',
            `Conversation already has an active response in progress: ${this.#response.id}. Wait until the response is finished before creating a new one.`,
          )
          return
        }
        if (this.#blocking && this.#callsWithoutOutput() > 0) {
          // A model whose calls block says nothing until every call has its output.
          this.#deferred++
          return
        }
        this.#startResponse(this.replies.shift() ?? { text: 'OK.' })
        return
      case 'response.cancel':
        if (!this.#response)
          this.#error(
            e,
            'response_cancel_not_active',
            'Cancellation failed: no active response found.',
          )
        else this.#endResponse('cancelled')
        return
      case 'conversation.item.truncate':
        this.#truncate(e)
        return
      default:
        return
    }
  }

  #createItem(e: ClientEvent): void {
    const it = e.item as { type: string; role?: string; call_id?: string; output?: string }
    if (it.type === 'function_call_output') {
      const known = this.items.some((i) => i.type === 'function_call' && i.callId === it.call_id)
      if (!known) {
        this.#error(e, 'invalid_value', `Tool call ID '${it.call_id}' not found in conversation.`)
        return
      }
    }
    const item: Item = {
      id: nextId('item'),
      type: it.type,
      ...(it.role ? { role: it.role } : {}),
      ...(it.call_id ? { callId: it.call_id } : {}),
      ...(it.output !== undefined ? { output: it.output } : {}),
      audioMs: 0,
      transcript: '',
    }
    this.items.push(item)
    this.send({
      type: 'conversation.item.added',
      previous_item_id: null,
      item: { id: item.id, ...it },
    })
    this.send({
      type: 'conversation.item.done',
      previous_item_id: null,
      item: { id: item.id, ...it },
    })
    this.#serveDeferred()
  }

  #truncate(e: ClientEvent): void {
    const item = this.items.find((i) => i.id === e.item_id)
    const end = Number(e.audio_end_ms)
    if (item?.role !== 'assistant') {
      this.#error(e, 'invalid_value', 'Only assistant message items can be truncated.')
      return
    }
    if (!(end >= 0) || end > item.audioMs) {
      this.#error(
        e,
        'invalid_value',
        `Audio content of ${item.audioMs}ms is shorter than ${end}ms.`,
      )
      return
    }
    item.audioMs = end
    // The service drops the transcript too: nothing the room did not hear stays in the context.
    item.transcript = ''
    this.send({
      type: 'conversation.item.truncated',
      item_id: item.id,
      content_index: 0,
      audio_end_ms: end,
    })
  }

  #callsWithoutOutput(): number {
    const answered = new Set(
      this.items.filter((i) => i.type === 'function_call_output').map((i) => i.callId),
    )
    return this.items.filter((i) => i.type === 'function_call' && !answered.has(i.callId)).length
  }

  #serveDeferred(): void {
    if (this.#deferred === 0 || this.#response || this.#callsWithoutOutput() > 0) return
    this.#deferred = 0
    this.#startResponse(this.replies.shift() ?? { text: 'OK.' })
  }

  #error(e: ClientEvent, code: string, message: string): void {
    const eventId = typeof e.event_id === 'string' ? e.event_id : undefined
    this.errors.push({ code, ...(eventId ? { eventId } : {}) })
    this.send({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        code,
        message,
        param: null,
        event_id: eventId ?? null,
      },
    })
  }
}

/** The server VAD's settings, as the client's `session.update` left them. */
function turnDetection(
  session: Record<string, unknown>,
): { interrupt_response?: boolean } | undefined {
  const audio = session.audio as
    | { input?: { turn_detection?: { interrupt_response?: boolean } } }
    | undefined
  return audio?.input?.turn_detection
}
