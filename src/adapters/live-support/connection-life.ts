import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type { LiveCloseInfo, LiveEvents, LiveToolResponse } from '../../ports/live-llm.js'

type State = 'connecting' | 'open' | 'closing' | 'closed'

/** How a connection's socket is ended: politely, or at once. */
export interface SocketEnd {
  /** The closing handshake (may throw on a socket in a bad state). */
  shut(): void
  /** No handshake: the socket is gone now. */
  terminate(): void
}

/** What a connection is made with, as both adapters' connections are. */
interface ConnectionOptions {
  readonly events: Pick<LiveEvents, 'closed'>
  readonly logger: Logger
  readonly clock: Clock
}

/**
 * The life of one live connection as the port's `LiveSession` promises it, the same for every
 * provider: connecting → open → closing → closed, never reopened. What the far side sends before
 * the caller has its session is held back (an adapter would otherwise report events while the
 * caller's `session` variable is still unassigned) and delivered in order by `release()`;
 * `closed` is reported once, last, and not at all for a connect that failed (its caller has the
 * rejection); a far side that never answers the closing handshake does not hold `close()`.
 */
export class ConnectionLife<E> {
  #state: State = 'connecting'
  #held: E[] | undefined = []
  #byClient = false
  #aborted = false
  #closedInfo: LiveCloseInfo | undefined
  #droppedAudio = 0
  readonly #closeWaiters: (() => void)[] = []
  readonly #o: ConnectionOptions
  /** How the adapter's log lines name a connection (`live`, `realtime`). */
  readonly #label: string
  /** Hands one far-side event or frame on to the adapter's reading of it. */
  readonly #dispatch: (e: E) => void

  constructor(o: ConnectionOptions, label: string, dispatch: (e: E) => void) {
    this.#o = o
    this.#label = label
    this.#dispatch = dispatch
  }

  get state(): State {
    return this.#state
  }

  opened(): void {
    this.#state = 'open'
  }

  /** The connection leaves by itself (e.g. before a session limit): no more sends. */
  leaving(): void {
    this.#state = 'closing'
  }

  /** A far-side event: held until `release()`, dropped once we closed. */
  receive(e: E): void {
    if (this.#byClient) return
    if (this.#held) this.#held.push(e)
    else this.#dispatch(e)
  }

  /** The caller has its session: deliver what arrived meanwhile, in order, then live. */
  release(): void {
    const held = this.#held ?? []
    this.#held = undefined
    for (const e of held) this.#dispatch(e)
  }

  /** A connect that failed: end the socket and stay silent (the caller gets the rejection). */
  abort(socket: Pick<SocketEnd, 'terminate'> | undefined): void {
    this.#aborted = true
    this.#state = 'closed'
    this.#held = undefined
    socket?.terminate()
  }

  /** The socket closed, by either side. */
  closed(code: number, reason: string): void {
    const was = this.#state
    this.#state = 'closed'
    for (const w of this.#closeWaiters.splice(0)) w()
    if (was === 'connecting' || this.#aborted || this.#closedInfo) return
    // Events still held are delivered first, so `closed` is the last thing the caller hears.
    if (this.#held) this.release()
    this.#closedInfo = { code, reason, byClient: this.#byClient }
    this.#o.logger.info(
      { code, reason, byClient: this.#byClient },
      `${this.#label} connection closed`,
    )
    try {
      this.#o.events.closed(this.#closedInfo)
    } catch (err) {
      this.#o.logger.error(
        { event: 'live_closed_listener_threw', err: errorText(err) },
        'live closed listener threw',
      )
    }
  }

  /** Our close; resolves when the socket is closed. Calling it again is harmless. */
  close(socket: SocketEnd | undefined): Promise<void> {
    if (this.#state === 'closed') return Promise.resolve()
    const done = new Promise<void>((resolve) => this.#closeWaiters.push(resolve))
    if (this.#state !== 'closing') {
      this.#byClient = true
      this.#state = 'closing'
      this.#held = undefined
      try {
        socket?.shut()
      } catch {
        socket?.terminate()
      }
      const t = this.#o.clock.setTimeout(() => socket?.terminate(), 2000)
      void done.then(() => this.#o.clock.clearTimeout(t))
    }
    return done
  }

  /** Whether a microphone frame may go out now; the first one dropped is logged. */
  audioAllowed(): boolean {
    if (this.#state === 'open') return true
    if (this.#droppedAudio++ === 0)
      this.#o.logger.warn(
        { event: 'live_audio_dropped', state: this.#state },
        'live audio dropped: connection not open',
      )
    return false
  }

  /**
   * Whether this answer may go out as far as the calls' kind goes: on a connection whose calls
   * block, the first answer is taken as the answer, so an interim one would end the call; it is
   * logged and not sent.
   */
  answerAllowed(r: LiveToolResponse, callsBlock: boolean): boolean {
    if (r.willContinue !== true || !callsBlock) return true
    this.#o.logger.warn(
      { event: 'interim_result_blocking_call', callId: r.id, tool: r.name },
      'interim result for a call that blocks; not sent',
    )
    return false
  }

  /** Whether anything may be sent now; a send refused is logged with `what` it was. */
  sendAllowed(what: string): boolean {
    if (this.#state === 'open') return true
    this.#o.logger.warn(
      { event: 'live_send_not_open', what, state: this.#state },
      'live send on a connection that is not open; dropped',
    )
    return false
  }
}
