import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { LiveSession } from '../ports/live-llm.js'
import { GapBuffer } from './gap-buffer.js'

export interface MicUplinkDeps {
  readonly gapBufferMs: number
  readonly log: Logger
  /** The open, current connection's session, if there is one. */
  live(): LiveSession | undefined
  isMuted(): boolean
  /** True once the session has started ending. */
  ending(): boolean
}

/**
 * Microphone audio on its way to the provider: each frame goes straight to the open connection —
 * never awaiting anything — or, while none is open (opening, resuming), into the gap buffer, which
 * is sent first when the next one opens.
 */
export class MicUplink {
  readonly #deps: MicUplinkDeps
  readonly #log: Logger
  readonly #gap: GapBuffer
  #sendFailed = false

  constructor(deps: MicUplinkDeps) {
    this.#deps = deps
    this.#log = deps.log
    this.#gap = new GapBuffer(deps.gapBufferMs)
  }

  /** Audio from before the session opened: sent first, once a connection is open. */
  preRoll(frames: readonly Uint8Array[]): void {
    for (const f of frames) this.#gap.push(f)
  }

  frame(pcm: Uint8Array): void {
    const session = this.#deps.live()
    if (session) {
      try {
        session.sendAudio(pcm)
      } catch (err) {
        // A socket that died under us: its close event starts the reconnect; say so once.
        if (!this.#sendFailed)
          this.#log.warn(
            { event: 'voice_send_audio_failed', err: errorText(err) },
            'voice sendAudio failed',
          )
        this.#sendFailed = true
      }
      return
    }
    if (!this.#deps.ending()) this.#gap.push(pcm)
  }

  /** Mute: no frame leaves (the MicGate sees to that); the provider is told the stream ended. */
  muted(): void {
    this.#gap.clear()
    const s = this.#deps.live()
    if (!s) return
    try {
      s.endAudio()
    } catch (err) {
      this.#log.warn(
        { event: 'voice_end_audio_failed', err: errorText(err) },
        'voice endAudio failed',
      )
    }
  }

  /** A connection opened: a send failure on it is news again. */
  opened(): void {
    this.#sendFailed = false
  }

  /** What the gap kept goes to the connection that just opened, first (unless muted meanwhile). */
  flushGap(session: LiveSession): void {
    const { frames, dropped } = this.#gap.take()
    if (dropped > 0) this.#log.info({ frames: dropped }, 'voice microphone frames dropped in a gap')
    if (this.#deps.isMuted()) return
    try {
      for (const f of frames) session.sendAudio(f)
    } catch (err) {
      this.#log.warn(
        { event: 'voice_send_audio_failed', err: errorText(err) },
        'voice sendAudio failed',
      )
    }
  }
}
