import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { LIVE_INPUT_RATE_HZ, type LiveSession } from '../ports/live-llm.js'
import type { PhraseCheck, PhraseVerdict } from '../ports/phrase-check.js'
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

/** The local check of a wake's pre-roll, and what to do when it refuses. */
export interface LocalWakeCheck {
  readonly check: PhraseCheck
  /**
   * How much of what follows the detection the check hears too, in ms: the pre-roll ends at the
   * detection, which can come before the phrase has ended. The audio is held meanwhile anyway.
   */
  readonly afterMs?: number
  /**
   * In shadow: the check runs beside the session and holds nothing (it has not earned the right
   * to, docs/wake-word.md); its verdict is only logged, and told by the check itself.
   */
  readonly shadow?: boolean
  /** Nothing was sent; the session should end as an unconfirmed wake. */
  readonly refused: () => void
}

/**
 * Microphone audio on its way to the provider: each frame goes straight to the open connection —
 * never awaiting anything — or, while none is open (opening, resuming), into the gap buffer, which
 * is sent first when the next one opens. While the local check of a wake's phrase is out, every
 * frame is held in the gap buffer as well, connection open or not: nothing leaves the room until
 * it agrees, and if it refuses, what was held is dropped unsent. A check in shadow (it has not
 * earned the right to hold audio yet) runs on the same audio and holds nothing.
 */
export class MicUplink {
  readonly #deps: MicUplinkDeps
  readonly #log: Logger
  readonly #gap: GapBuffer
  #sendFailed = false
  /** The local check: none asked, out (audio held), or refused (nothing is ever sent). */
  #hold: 'none' | 'checking' | 'refused' = 'none'
  /** While the check waits for the audio after the detection: what it will hear, and how much more. */
  #window: { frames: Uint8Array[]; left: number; local: LocalWakeCheck } | undefined

  constructor(deps: MicUplinkDeps) {
    this.#deps = deps
    this.#log = deps.log
    this.#gap = new GapBuffer(deps.gapBufferMs)
  }

  /**
   * Audio from before the session opened: sent first, once a connection is open — and, with
   * `local`, once its check of the phrase in this audio agrees.
   */
  preRoll(frames: readonly Uint8Array[], local?: LocalWakeCheck): void {
    for (const f of frames) this.#gap.push(f)
    if (!local) return
    if (!local.shadow) this.#hold = 'checking'
    const left = Math.round((local.afterMs ?? 0) * (LIVE_INPUT_RATE_HZ / 1000) * 2)
    if (left > 0) this.#window = { frames: [...frames], left, local }
    else this.#ask(frames, local)
  }

  #ask(frames: readonly Uint8Array[], local: LocalWakeCheck): void {
    local.check.check(joined(frames)).then(
      (v) => this.#checked(v, local),
      (err: unknown) => {
        // A recogniser that cannot run must not deafen the speaker: the model's own transcription
        // is still the second opinion. Said as a warning, every time.
        this.#log.warn(
          { event: 'wake_check_failed', err: errorText(err) },
          'the local wake check could not run: the wake goes on unchecked',
        )
        this.#release()
      },
    )
  }

  frame(pcm: Uint8Array): void {
    if (this.#hold === 'refused') return
    const w = this.#window
    if (w) {
      w.frames.push(new Uint8Array(pcm))
      w.left -= pcm.byteLength
      if (w.left <= 0) {
        this.#window = undefined
        this.#ask(w.frames, w.local)
      }
    }
    const session = this.#hold === 'checking' ? undefined : this.#deps.live()
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
    if (this.#hold !== 'none') return
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

  #checked(v: PhraseVerdict, local: LocalWakeCheck): void {
    const ms = Math.round(v.ms)
    if (local.shadow) {
      this.#log.info(
        { event: 'wake_checked_in_shadow', agreed: v.agreed, heard: v.heard, ms },
        v.agreed
          ? 'the local check (in shadow) heard the wake phrase'
          : 'the local check (in shadow) did not hear the wake phrase: it would have sent nothing',
      )
      return
    }
    if (this.#hold !== 'checking') return
    if (v.agreed) {
      this.#log.info(
        { event: 'wake_checked', heard: v.heard, ms },
        'the local check heard the wake phrase',
      )
      this.#release()
      return
    }
    this.#hold = 'refused'
    this.#gap.clear()
    this.#log.info(
      { event: 'wake_refused_locally', ms },
      'the local check did not hear the wake phrase: nothing sent',
    )
    local.refused()
  }

  /** The check is over: what was held goes to the connection if one is open, as on an open. */
  #release(): void {
    if (this.#hold !== 'checking') return
    this.#hold = 'none'
    const session = this.#deps.live()
    if (session && !this.#deps.ending()) this.flushGap(session)
  }
}

/** The pre-roll as one buffer (the wake stage gives one already). */
function joined(frames: readonly Uint8Array[]): Uint8Array {
  const [only, ...rest] = frames
  if (only && rest.length === 0) return only
  const out = new Uint8Array(frames.reduce((n, f) => n + f.byteLength, 0))
  frames.reduce((at, f) => {
    out.set(f, at)
    return at + f.byteLength
  }, 0)
  return out
}
