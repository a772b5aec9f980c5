import type { FunctionResponse, Session } from '@google/genai'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type {
  LiveCloseInfo,
  LiveEvents,
  LiveSession,
  LiveToolCall,
  LiveToolResponse,
} from '../../ports/live-llm.js'
import { LIVE_INPUT_RATE_HZ } from '../../ports/live-llm.js'
import type { ModelCapabilities } from './capabilities.js'
import { redactKey } from './redact.js'
import { ServerFrames } from './server-frames.js'
import type { GuardedSocket } from './socket.js'

const INPUT_MIME = `audio/pcm;rate=${LIVE_INPUT_RATE_HZ}`

type State = 'connecting' | 'open' | 'closing' | 'closed'

/**
 * One live connection, as the port's LiveSession. It holds back server events until `open()` has
 * resolved (the SDK would deliver them while the caller's `session` variable is still unassigned)
 * and never throws from an audio send on a closed socket. Which answers may be sent at all (one
 * final per call, none for a withdrawn one, only on the lineage that asked) is the voice driver's
 * call ledger's rule, enforced there once; this sends what it is given.
 */
export class LiveConnection implements LiveSession {
  #state: State = 'connecting'
  #sdk: Session | undefined
  #socket: GuardedSocket | undefined
  #held: Record<string, unknown>[] | undefined = []
  #byClient = false
  #aborted = false
  #closedInfo: LiveCloseInfo | undefined
  readonly #closeWaiters: (() => void)[] = []
  readonly #frames: ServerFrames
  readonly #events: LiveEvents
  readonly #log: Logger
  readonly #apiKey: string
  readonly #caps: ModelCapabilities
  readonly #clock: Clock
  /** Calls on this connection were declared NON_BLOCKING. */
  readonly #nonBlocking: boolean
  #audioSinceEnd = false
  #droppedAudio = 0

  constructor(options: {
    events: LiveEvents
    logger: Logger
    apiKey: string
    capabilities: ModelCapabilities
    nonBlocking: boolean
    clock: Clock
  }) {
    this.#events = options.events
    this.#log = options.logger
    this.#apiKey = options.apiKey
    this.#caps = options.capabilities
    this.#nonBlocking = options.nonBlocking
    this.#clock = options.clock
    this.#frames = new ServerFrames(this.#bookkeeping(options.events), options.logger)
  }

  get state(): State {
    return this.#state
  }

  attachSocket(socket: GuardedSocket): void {
    this.#socket = socket
  }

  /** `connect()` resolved: sends go through the SDK session from now on. */
  opened(sdk: Session): void {
    this.#sdk = sdk
    this.#state = 'open'
  }

  /** The caller has its session: deliver what arrived meanwhile, in order, then live. */
  release(): void {
    const held = this.#held ?? []
    this.#held = undefined
    for (const f of held) this.#dispatch(f)
  }

  /** A connect that failed: end the socket and stay silent (the caller gets the rejection). */
  abort(): void {
    this.#aborted = true
    this.#state = 'closed'
    this.#held = undefined
    this.#socket?.terminate()
  }

  onFrame(frame: Record<string, unknown>): void {
    if (this.#held) this.#held.push(frame)
    else this.#dispatch(frame)
  }

  onClosed(code: number, reason: string): void {
    const wasConnecting = this.#state === 'connecting'
    this.#state = 'closed'
    for (const w of this.#closeWaiters.splice(0)) w()
    if (wasConnecting || this.#aborted || this.#closedInfo) return
    // Events still held are delivered first, so `closed` is the last thing the caller hears.
    if (this.#held) this.release()
    this.#closedInfo = { code, reason, byClient: this.#byClient }
    this.#log.info({ code, reason, byClient: this.#byClient }, 'live connection closed')
    try {
      this.#events.closed(this.#closedInfo)
    } catch (err) {
      this.#log.error(
        { event: 'live_closed_listener_threw', err: errorText(err) },
        'live closed listener threw',
      )
    }
  }

  sendAudio(pcm: Uint8Array): void {
    if (this.#state !== 'open') {
      if (this.#droppedAudio++ === 0)
        this.#log.warn(
          { event: 'live_audio_dropped', state: this.#state },
          'live audio dropped: connection not open',
        )
      return
    }
    const data = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64')
    if (
      this.#send('audio', (s) => s.sendRealtimeInput({ audio: { data, mimeType: INPUT_MIME } }))
    ) {
      this.#audioSinceEnd = true
    }
  }

  endAudio(): void {
    // One audioStreamEnd per pause; repeating it says nothing new.
    if (this.#state !== 'open' || !this.#audioSinceEnd) return
    if (this.#send('audioStreamEnd', (s) => s.sendRealtimeInput({ audioStreamEnd: true }))) {
      this.#audioSinceEnd = false
    }
  }

  respond(r: LiveToolResponse): void {
    const interim = r.willContinue === true
    // The one guard kept here: how this connection declared its tools on the wire (`behaviorFor`:
    // a model that cannot block is declared NON_BLOCKING whatever was asked, one that blocks by
    // default BLOCKING) is known only to the adapter, not to the driver's ledger. A blocking call
    // takes the first response as the answer: an interim would end it.
    if (interim && !this.#nonBlocking) {
      this.#log.warn(
        { event: 'interim_result_blocking_call', callId: r.id, tool: r.name },
        'interim result for a blocking call; not sent',
      )
      return
    }
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
    if (this.#state === 'closed') return Promise.resolve()
    const done = new Promise<void>((resolve) => this.#closeWaiters.push(resolve))
    if (this.#state !== 'closing') {
      this.#byClient = true
      this.#state = 'closing'
      this.#held = undefined
      try {
        this.#sdk ? this.#sdk.close() : this.#socket?.close()
      } catch {
        this.#socket?.terminate()
      }
      // A far side that never answers the close handshake must not hold the driver.
      const t = this.#clock.setTimeout(() => this.#socket?.terminate(), 2000)
      void done.then(() => this.#clock.clearTimeout(t))
    }
    return done
  }

  #dispatch(frame: Record<string, unknown>): void {
    if (this.#byClient) return
    this.#frames.dispatch(frame)
  }

  #send(what: string, fn: (s: Session) => void): boolean {
    const s = this.#sdk
    if (!s || this.#state !== 'open') {
      this.#log.warn(
        { event: 'live_send_not_open', what, state: this.#state },
        'live send on a connection that is not open; dropped',
      )
      return false
    }
    try {
      fn(s)
      return true
    } catch (err) {
      const msg = redactKey(errorText(err), this.#apiKey)
      this.#log.warn({ event: 'live_send_failed', what, err: msg }, 'live send failed; dropped')
      return false
    }
  }

  /** Events pass through here to be logged where the adapter sees them. */
  #bookkeeping(events: LiveEvents): LiveEvents {
    return {
      audio: (pcm) => events.audio(pcm),
      inputTranscription: (t) => events.inputTranscription(t),
      outputTranscription: (t) => events.outputTranscription(t),
      interrupted: () => events.interrupted(),
      generationComplete: () => events.generationComplete(),
      turnComplete: () => events.turnComplete(),
      toolCall: (calls: readonly LiveToolCall[]) => {
        this.#log.info(
          { calls: calls.map((c) => ({ id: c.id, name: c.name })), pii: calls.map((c) => c.args) },
          'live tool call',
        )
        events.toolCall(calls)
      },
      toolCallCancellation: (ids) => {
        this.#log.info({ ids }, 'live tool calls withdrawn')
        events.toolCallCancellation(ids)
      },
      goAway: (ms) => {
        this.#log.info({ timeLeftMs: ms }, 'live goAway')
        events.goAway(ms)
      },
      resumptionUpdate: (h, r) => events.resumptionUpdate(h, r),
      usage: (n) => events.usage(n),
      closed: (i) => events.closed(i),
    }
  }
}
