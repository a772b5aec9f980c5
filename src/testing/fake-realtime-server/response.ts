import { phrase } from '../fake-live-server/speech.js'
import { type Item, nextId } from './item.js'

/** One reply the fake model makes: words (spoken as canned audio), function calls, or both. */
export interface Reply {
  /** What it says; its transcript. */
  readonly text?: string
  /** Canned phrases to speak (their own audio and words), in place of `text` and `audioMs`. */
  readonly phrases?: readonly string[]
  /** How much audio it speaks (canned speech, repeated); default: 40 ms a word, at least 200. */
  readonly audioMs?: number
  readonly calls?: readonly {
    readonly callId?: string
    readonly name: string
    readonly args?: unknown
  }[]
  /** Stop after the audio: the response stays active until `finish()` (or a barge-in). */
  readonly hold?: boolean
}

/**
 * One response of the fake model, as the service streams it: `response.created`, the reply's audio
 * and transcript in deltas, its items done, its function calls, and `response.done`. Its items
 * join the conversation's as they are made.
 */
export class FakeResponse {
  readonly id = nextId('resp')
  readonly #reply: Reply
  /** This response's output items, in order. */
  readonly items: Item[] = []
  readonly #conversation: Item[]
  readonly #send: (event: Record<string, unknown>) => void

  constructor(reply: Reply, conversation: Item[], send: (event: Record<string, unknown>) => void) {
    this.#reply = reply
    this.#conversation = conversation
    this.#send = send
  }

  /** `response.created`, then the reply's audio with its transcript alongside. */
  start(): void {
    const { id } = this
    const reply = this.#reply
    this.#send({
      type: 'response.created',
      response: { id, object: 'realtime.response', status: 'in_progress', output: [] },
    })
    const canned = (reply.phrases ?? []).map((p) => phrase(p))
    const text = canned.length > 0 ? canned.map((p) => p.text).join(' ') : reply.text
    if (text !== undefined || reply.audioMs) {
      const item: Item = {
        id: nextId('item'),
        type: 'message',
        role: 'assistant',
        audioMs: 0,
        transcript: '',
      }
      this.items.push(item)
      this.#conversation.push(item)
      this.#send({
        type: 'response.output_item.added',
        response_id: id,
        output_index: 0,
        item: { id: item.id, type: 'message', role: 'assistant', content: [] },
      })
      const ms = reply.audioMs ?? Math.max(200, (text ?? '').split(/\s+/).length * 40)
      const pcm = canned.length > 0 ? Buffer.concat(canned.map((p) => p.pcm)) : speech(ms)
      const words = text ? `${text} `.split(/(?<=\s)/) : []
      const chunks = Math.ceil(pcm.length / 1920)
      for (let i = 0; i < chunks; i++) {
        const part = pcm.subarray(i * 1920, (i + 1) * 1920)
        item.audioMs += part.length / 48
        this.#send({
          type: 'response.output_audio.delta',
          response_id: id,
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          delta: part.toString('base64'),
        })
        const piece = words
          .slice(
            Math.floor((i * words.length) / chunks),
            Math.floor(((i + 1) * words.length) / chunks),
          )
          .join('')
        if (piece) {
          item.transcript += piece
          this.#send({
            type: 'response.output_audio_transcript.delta',
            response_id: id,
            item_id: item.id,
            output_index: 0,
            content_index: 0,
            delta: piece,
          })
        }
      }
    }
  }

  /** The items done, then the reply's function calls. */
  finish(): void {
    for (const item of this.items) {
      this.#send({
        type: 'response.output_audio.done',
        response_id: this.id,
        item_id: item.id,
        output_index: 0,
        content_index: 0,
      })
      this.#send({
        type: 'response.output_item.done',
        response_id: this.id,
        output_index: 0,
        item: { id: item.id, type: 'message', role: 'assistant', status: 'completed' },
      })
    }
    for (const c of this.#reply.calls ?? []) {
      const item: Item = {
        id: nextId('item'),
        type: 'function_call',
        callId: c.callId ?? nextId('call'),
        audioMs: 0,
        transcript: '',
      }
      this.items.push(item)
      this.#conversation.push(item)
      const args = JSON.stringify(c.args ?? {})
      const call = { id: item.id, type: 'function_call', call_id: item.callId, name: c.name }
      this.#send({
        type: 'response.output_item.added',
        response_id: this.id,
        output_index: 1,
        item: { ...call, arguments: '' },
      })
      this.#send({
        type: 'response.function_call_arguments.done',
        response_id: this.id,
        item_id: item.id,
        output_index: 1,
        call_id: item.callId,
        name: c.name,
        arguments: args,
      })
      this.#send({
        type: 'response.output_item.done',
        response_id: this.id,
        output_index: 1,
        item: { ...call, arguments: args, status: 'completed' },
      })
    }
  }

  /** `response.done`, completed or cancelled (by a barge-in or `response.cancel`). */
  done(status: 'completed' | 'cancelled'): void {
    this.#send({
      type: 'response.done',
      response: {
        id: this.id,
        object: 'realtime.response',
        status,
        ...(status === 'cancelled'
          ? { status_details: { type: 'cancelled', reason: 'turn_detected' } }
          : {}),
        output: this.items.map((i) => ({ id: i.id, type: i.type })),
        usage: { total_tokens: 100, input_tokens: 60, output_tokens: 40 },
      },
    })
  }
}

/** `ms` of canned 24 kHz speech, the phrase repeated as needed. */
function speech(ms: number): Buffer {
  const src = phrase('hello').pcm
  const pcm = Buffer.alloc(Math.round(ms * 24) * 2)
  for (let o = 0; o < pcm.length; o += src.length) src.copy(pcm, o)
  return pcm
}
