import type { RealtimeClientEvent, RealtimeServerEvent } from 'openai/resources/realtime/realtime'
import { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { DropReport } from '../../ports/audio.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'
import type { LiveEvents, LiveSession, LiveToolResponse } from '../../ports/live-llm.js'
import { ConnectionLife } from '../live-support/connection-life.js'
import { PlayedAudio } from './played-audio.js'
import { Upsampler16to24 } from './resampler.js'
import { ResponseQueue, type Urgency } from './response-queue.js'
import { ServerEvents } from './server-events.js'

/** What the connection needs of the socket: the SDK's `OpenAIRealtimeWS`, or a test's stand-in. */
export interface RealtimeSocket {
  send(event: RealtimeClientEvent): void
  close(props?: { code: number; reason: string }): void
  readonly socket: { readonly readyState: number; terminate(): void }
}

const OPEN = 1

/** The service's session limit and how long before it the connection leaves. */
export interface SessionLimit {
  readonly limitMs: number
  readonly leadMs: number
}

/**
 * One Realtime WebSocket as the port's LiveSession. What the Gemini adapter gets from the
 * protocol, this one keeps itself: one response at a time (`ResponseQueue`), the audio each item
 * put in the speaker (`PlayedAudio`, for `conversation.item.truncate`), and which calls already
 * had an output (a second answer to a call is given as a new call-and-output pair). Which answers
 * may be sent at all is the voice driver's call ledger's rule; this sends what it is given.
 */
export class RealtimeConnection implements LiveSession {
  #socket: RealtimeSocket | undefined
  readonly #life: ConnectionLife<RealtimeServerEvent>
  readonly #events: LiveEvents
  readonly #log: Logger
  readonly #clock: Clock
  readonly #asyncCalls: boolean
  readonly #upsampler = new Upsampler16to24()
  readonly #played = new PlayedAudio()
  readonly #responses: ResponseQueue
  readonly #server: ServerEvents
  /** Calls the model made on this connection: their name and arguments, for a second answer. */
  readonly #calls = new Map<string, { name: string; arguments: string }>()
  /** Calls that already have a `function_call_output` in the conversation. */
  readonly #answered = new Set<string>()
  #sent = 0
  #audioSinceEnd = false
  readonly #limit: SessionLimit
  #limitTimers: TimerHandle[] = []
  /** The session limit is near: close at the next quiet moment. */
  #leaving = false

  constructor(o: {
    events: LiveEvents
    logger: Logger
    clock: Clock
    asyncToolCalls: boolean
    limit: SessionLimit
  }) {
    this.#events = o.events
    this.#log = o.logger
    this.#clock = o.clock
    this.#asyncCalls = o.asyncToolCalls
    this.#limit = o.limit
    this.#responses = new ResponseQueue(() =>
      this.#send({ type: 'response.create', event_id: `nocturn_response_${++this.#sent}` }),
    )
    this.#server = new ServerEvents({
      events: o.events,
      log: o.logger,
      clock: o.clock,
      responses: this.#responses,
      played: this.#played,
      toolCall: (id, name, args) => this.#calls.set(id, { name, arguments: args }),
      cancel: () => this.#send({ type: 'response.cancel' }),
      quiet: () => this.#quiet(),
    })
    const server = this.#server
    this.#life = new ConnectionLife(o, 'realtime', (e) => server.dispatch(e))
  }

  get state() {
    return this.#life.state
  }

  attach(socket: RealtimeSocket): void {
    this.#socket = socket
  }

  /** The session is set up: sends are allowed from now on. */
  opened(): void {
    this.#life.opened()
    const { limitMs, leadMs } = this.#limit
    // The service ends a session at its limit with no way to resume it. Shortly before, the
    // connection goes at a quiet moment, as a drop the driver answers with a fresh connection
    // that reads the history (docs/openai.md, "Session limit"); at the last moment, quiet or not.
    this.#limitTimers = [
      this.#clock.setTimeout(
        () => {
          this.#log.info({ timeLeftMs: leadMs }, 'realtime session limit near')
          this.#leaving = true
          this.#events.goAway(leadMs)
          this.#quiet()
        },
        Math.max(0, limitMs - leadMs),
      ),
      this.#clock.setTimeout(() => this.#leave(), Math.max(0, limitMs - leadMs / 4)),
    ]
  }

  /** Nothing is being said or owed: a good moment to leave, if leaving. */
  #quiet(): void {
    if (!this.#leaving || this.#responses.active || this.#responses.owed) return
    if (this.#server.userSpeaking) return
    this.#leave()
  }

  #leave(): void {
    if (this.#life.state !== 'open') return
    this.#log.info({}, 'realtime session limit: closing to reopen fresh')
    this.#life.leaving()
    try {
      this.#socket?.close({ code: 1000, reason: 'session limit' })
    } catch {
      this.#socket?.socket.terminate()
    }
  }

  /** The caller has its session: deliver what arrived meanwhile, in order, then live. */
  release(): void {
    this.#life.release()
  }

  /** A connect that failed: end the socket and stay silent (the caller gets the rejection). */
  abort(): void {
    this.#life.abort(this.#socket?.socket)
  }

  onEvent(e: RealtimeServerEvent): void {
    this.#life.receive(e)
  }

  onClosed(code: number, reason: string): void {
    this.#server.stop()
    for (const t of this.#limitTimers) this.#clock.clearTimeout(t)
    this.#life.closed(code, reason)
  }

  /** Sends without the open check: the setup and the history go out before `open()` resolves. */
  sendSetup(event: RealtimeClientEvent): boolean {
    return this.#write(event)
  }

  sendAudio(pcm: Uint8Array): void {
    if (!this.#life.audioAllowed()) return
    const up = this.#upsampler.push(pcm)
    const audio = Buffer.from(up.buffer, up.byteOffset, up.byteLength).toString('base64')
    if (this.#send({ type: 'input_audio_buffer.append', audio })) this.#audioSinceEnd = true
  }

  endAudio(): void {
    // The microphone stopped (mute). Server VAD commits each utterance at its pause; one cut off
    // by the mute is committed now, so what was said before it is answered. Between utterances
    // the buffer holds only the room since the last one: it is cleared (a commit of it would be
    // an utterance of silence). Once per pause, like Gemini's audioStreamEnd.
    if (this.#life.state !== 'open' || !this.#audioSinceEnd) return
    const ok = this.#server.userSpeaking
      ? this.#send({ type: 'input_audio_buffer.commit' })
      : this.#send({ type: 'input_audio_buffer.clear' })
    if (ok) this.#audioSinceEnd = false
  }

  respond(r: LiveToolResponse): void {
    // A model without asynchronous calls waits for each output: its calls block.
    if (!this.#life.answerAllowed(r, !this.#asyncCalls)) return
    if (this.#life.state !== 'open') throw notOpen(r.id)
    const output = JSON.stringify(r.response)
    let ok: boolean
    if (this.#answered.has(r.id)) {
      // The call has its output (the interim): the final one comes as the tool's second report,
      // a call-and-output pair of its own, never as words in the conversation.
      const call = this.#calls.get(r.id)
      const callId = `${r.id}_final`
      ok =
        this.#send({
          type: 'conversation.item.create',
          item: {
            type: 'function_call',
            call_id: callId,
            name: call?.name ?? r.name,
            arguments: call?.arguments ?? '{}',
          },
        }) &&
        this.#send({
          type: 'conversation.item.create',
          item: { type: 'function_call_output', call_id: callId, output },
        })
    } else {
      ok = this.#send({
        type: 'conversation.item.create',
        item: { type: 'function_call_output', call_id: r.id, output },
      })
    }
    if (!ok) throw notOpen(r.id)
    this.#answered.add(r.id)
    const urgency = urgencyOf(r)
    if (urgency) this.#responses.request(urgency)
  }

  playbackCut(report: DropReport): void {
    if (this.#life.state !== 'open') return
    this.#server.cut()
    for (const t of this.#played.cut(report)) {
      this.#send({
        type: 'conversation.item.truncate',
        item_id: t.itemId,
        content_index: 0,
        audio_end_ms: t.audioEndMs,
      })
      this.#log.info({ item: t.itemId, audioEndMs: t.audioEndMs }, 'realtime reply truncated')
    }
  }

  close(): Promise<void> {
    const socket = this.#socket
    return this.#life.close({
      shut: () => {
        this.#server.stop()
        socket?.close({ code: 1000, reason: 'client closed' })
      },
      terminate: () => socket?.socket.terminate(),
    })
  }

  #send(event: RealtimeClientEvent): boolean {
    return this.#life.sendAllowed(event.type) && this.#write(event)
  }

  #write(event: RealtimeClientEvent): boolean {
    const s = this.#socket
    // `ws` drops a send on a closed socket silently: an answer must not vanish unnoticed.
    if (!s || s.socket.readyState !== OPEN) return false
    s.send(event)
    return true
  }
}

/** How soon the model should speak after an answer (docs/openai.md). */
function urgencyOf(r: LiveToolResponse): Urgency | undefined {
  if (r.willContinue) return 'idle' // the interim never cuts the model off
  switch (r.scheduling) {
    case 'SILENT':
      return undefined
    case 'WHEN_IDLE':
      return 'idle'
    default:
      // INTERRUPT, or none (a model without asynchronous calls is waiting for exactly this).
      return 'now'
  }
}

function notOpen(id: string): NocturnError {
  return new NocturnError(
    'NOC_ERR_LIVE_CLOSED',
    `the realtime connection is not open; the answer for call ${id} was not sent`,
  )
}
