import type { FunctionResponse, Session } from '@google/genai'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type {
  LiveEvents,
  LiveSession,
  LiveToolCall,
  LiveToolResponse,
} from '../../ports/live-llm.js'
import { LIVE_INPUT_RATE_HZ } from '../../ports/live-llm.js'
import { ConnectionLife } from '../live-support/connection-life.js'
import type { ModelCapabilities } from './capabilities.js'
import { redactKey } from './redact.js'
import { ServerFrames } from './server-frames.js'
import type { GuardedSocket } from './socket.js'

const INPUT_MIME = `audio/pcm;rate=${LIVE_INPUT_RATE_HZ}`

/**
 * One live connection, as the port's LiveSession. It holds back server events until `open()` has
 * resolved (the SDK would deliver them while the caller's `session` variable is still unassigned)
 * and never throws from an audio send on a closed socket. Which answers may be sent at all (one
 * final per call, none for a withdrawn one, only on the lineage that asked) is the voice driver's
 * call ledger's rule, enforced there once; this sends what it is given.
 */
export class LiveConnection implements LiveSession {
  #sdk: Session | undefined
  #socket: GuardedSocket | undefined
  readonly #life: ConnectionLife<Record<string, unknown>>
  readonly #log: Logger
  readonly #apiKey: string
  readonly #caps: ModelCapabilities
  /** Calls on this connection were declared NON_BLOCKING. */
  readonly #nonBlocking: boolean
  #audioSinceEnd = false

  constructor(o: {
    events: LiveEvents
    logger: Logger
    apiKey: string
    capabilities: ModelCapabilities
    nonBlocking: boolean
    clock: Clock
  }) {
    const frames = new ServerFrames(bookkeeping(o.events, o.logger), o.logger)
    this.#life = new ConnectionLife(o, 'live', (f) => frames.dispatch(f))
    this.#log = o.logger
    this.#apiKey = o.apiKey
    this.#caps = o.capabilities
    this.#nonBlocking = o.nonBlocking
  }

  get state() {
    return this.#life.state
  }

  attachSocket(socket: GuardedSocket): void {
    this.#socket = socket
  }

  /** `connect()` resolved: sends go through the SDK session from now on. */
  opened(sdk: Session): void {
    this.#sdk = sdk
    this.#life.opened()
  }

  /** The caller has its session: deliver what arrived meanwhile, in order, then live. */
  release(): void {
    this.#life.release()
  }

  /** A connect that failed: end the socket and stay silent (the caller gets the rejection). */
  abort(): void {
    this.#life.abort(this.#socket)
  }

  onFrame(frame: Record<string, unknown>): void {
    this.#life.receive(frame)
  }

  onClosed(code: number, reason: string): void {
    this.#life.closed(code, reason)
  }

  sendAudio(pcm: Uint8Array): void {
    if (!this.#life.audioAllowed()) return
    const data = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64')
    if (
      this.#send('audio', (s) => s.sendRealtimeInput({ audio: { data, mimeType: INPUT_MIME } }))
    ) {
      this.#audioSinceEnd = true
    }
  }

  endAudio(): void {
    // One audioStreamEnd per pause; repeating it says nothing new.
    if (this.#life.state !== 'open' || !this.#audioSinceEnd) return
    if (this.#send('audioStreamEnd', (s) => s.sendRealtimeInput({ audioStreamEnd: true }))) {
      this.#audioSinceEnd = false
    }
  }

  respond(r: LiveToolResponse): void {
    const interim = r.willContinue === true
    // The one guard kept here: how this connection declared its tools on the wire (`behaviorFor`:
    // a model that cannot block is declared NON_BLOCKING whatever was asked, one that blocks by
    // default BLOCKING) is known only to the adapter, not to the driver's ledger.
    if (!this.#life.answerAllowed(r, !this.#nonBlocking)) return
    const fr: FunctionResponse = { id: r.id, name: r.name, response: r.response }
    if (this.#nonBlocking) {
      fr.willContinue = interim
      if (r.scheduling && this.#caps.scheduling)
        fr.scheduling = r.scheduling as NonNullable<FunctionResponse['scheduling']>
    }
    if (!this.#send('toolResponse', (s) => s.sendToolResponse({ functionResponses: [fr] }))) {
      // Unlike audio, an answer must not vanish: the driver keeps it for the resumed connection.
      throw new NocturnError(
        'NOC_ERR_LIVE_CLOSED',
        `the live connection is not open; the answer for call ${r.id} was not sent`,
      )
    }
  }

  /**
   * A typed user turn, as `realtimeInput.text` (which every live model takes; 3.1 takes
   * `clientContent` only as the opening history). Only `doctor --probe` types: the appliance speaks.
   */
  sendText(text: string): void {
    this.#send('text', (s) => s.sendRealtimeInput({ text }))
  }

  /** Gemini has no way to cut its record of a reply (no truncate): it keeps the whole reply. */
  playbackCut(): void {}

  close(): Promise<void> {
    const socket = this.#socket
    return this.#life.close({
      shut: () => (this.#sdk ? this.#sdk.close() : socket?.close()),
      terminate: () => socket?.terminate(),
    })
  }

  #send(what: string, fn: (s: Session) => void): boolean {
    const s = this.#sdk
    if (!this.#life.sendAllowed(what) || !s) return false
    try {
      fn(s)
      return true
    } catch (err) {
      const msg = redactKey(errorText(err), this.#apiKey)
      this.#log.warn({ event: 'live_send_failed', what, err: msg }, 'live send failed; dropped')
      return false
    }
  }
}

/** Events pass through here to be logged where the adapter sees them. */
function bookkeeping(events: LiveEvents, log: Logger): LiveEvents {
  return {
    audio: (pcm) => events.audio(pcm),
    inputTranscription: (t) => events.inputTranscription(t),
    outputTranscription: (t) => events.outputTranscription(t),
    interrupted: () => events.interrupted(),
    generationComplete: () => events.generationComplete(),
    turnComplete: () => events.turnComplete(),
    toolCall: (calls: readonly LiveToolCall[]) => {
      log.info(
        { calls: calls.map((c) => ({ id: c.id, name: c.name })), pii: calls.map((c) => c.args) },
        'live tool call',
      )
      events.toolCall(calls)
    },
    toolCallCancellation: (ids) => {
      log.info({ ids }, 'live tool calls withdrawn')
      events.toolCallCancellation(ids)
    },
    goAway: (ms) => {
      log.info({ timeLeftMs: ms }, 'live goAway')
      events.goAway(ms)
    },
    resumptionUpdate: (h, r) => events.resumptionUpdate(h, r),
    usage: (n) => events.usage(n),
    closed: (i) => events.closed(i),
  }
}
