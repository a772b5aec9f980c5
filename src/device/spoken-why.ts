import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { AudioOut } from '../ports/audio.js'
import type { LedState } from '../ports/panel.js'
import type { ProviderFailure } from '../ports/provider-listener.js'
import type { DeviceState } from './device-state.js'
import type { WhyAudio } from './why-audio.js'
import { reasonToSay } from './why-sentences.js'

/** The activities of a session opening or open: the room is waiting for an answer. */
const IN_SESSION: readonly LedState[] = ['listening', 'speaking', 'waiting_for_approval']

export interface SpokenWhyOptions {
  readonly device: DeviceState
  /** The speaker the model's replies go to: its volume, and the drop and stop button act on it. */
  readonly speaker: Pick<AudioOut, 'write' | 'endOfReply'>
  readonly audio: WhyAudio
  readonly logger: Logger
}

/**
 * The room hears why (docs/voice-driver.md, "When no provider can be reached"): when no provider
 * could be reached for a session someone opened, one short sentence after the earcon instead of
 * silence — once per session, never over a ringing timer, and only while a session is opening
 * (a retry nobody asked for says nothing). It plays as a reply does: the drop and the stop
 * button end it; a stop before it is ready cancels it.
 */
export class SpokenWhy {
  readonly #o: SpokenWhyOptions
  readonly #log: Logger
  readonly #unsubscribe: Array<() => void>
  /** Said (or tried) in this session: the next session may say it again. */
  #said = false
  #pending: AbortController | undefined

  constructor(options: SpokenWhyOptions) {
    this.#o = options
    this.#log = options.logger.child({ component: 'spoken-why' })
    this.#unsubscribe = [
      options.device.subscribe((s, change) => {
        if (change.kind === 'activity' && !IN_SESSION.includes(s.activity)) this.#said = false
      }),
      options.device.onStop(() => this.#cancel()),
    ]
  }

  /** No provider could be reached: say why, if a session is waiting for an answer. */
  unreachable(failures: readonly ProviderFailure[]): void {
    const s = this.#o.device.snapshot
    if (!IN_SESSION.includes(s.activity) || this.#said) return
    this.#said = true
    const reason = reasonToSay(failures)
    if (s.ringing.length > 0) {
      this.#log.info({ reason }, 'why not said: a timer is ringing')
      return
    }
    const pending = new AbortController()
    this.#pending = pending
    this.#o.audio
      .audio(
        reason,
        failures.map((f) => f.provider),
        pending.signal,
      )
      .then(({ pcm, source, provider }) => {
        if (pending.signal.aborted) return
        if (this.#o.device.snapshot.ringing.length > 0) {
          this.#log.info({ reason }, 'why not said: a timer began ringing')
          return
        }
        this.#o.speaker.write(pcm)
        this.#o.speaker.endOfReply()
        this.#log.info({ event: 'why_said', reason, source, provider }, 'why said to the room')
      })
      .catch((err: unknown) => {
        if (pending.signal.aborted) return
        this.#log.warn({ event: 'why_not_said', reason, err: errorText(err) }, 'why not said')
      })
      .finally(() => {
        if (this.#pending === pending) this.#pending = undefined
      })
  }

  close(): void {
    this.#cancel()
    for (const u of this.#unsubscribe) u()
  }

  #cancel(): void {
    this.#pending?.abort()
    this.#pending = undefined
  }
}
