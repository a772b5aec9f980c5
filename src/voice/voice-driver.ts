import { NocturnError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { DeviceState } from '../device/device-state.js'
import type { LedState } from '../ports/panel.js'
import type { VoiceSessionDeps } from './session-types.js'
import {
  DEFAULT_VOICE_OPTIONS,
  type SessionSummary,
  type VoiceOptions,
  type WaitingNotice,
} from './session-types.js'
import { VoiceSession } from './voice-session.js'
import { voiceState } from './voice-state.js'
import type { WakeCheck } from './wake-confirmation.js'

interface VoiceDriverListener {
  /** For the LED and the status topic; called on every change. */
  state?(state: LedState): void
  /** A model without asynchronous calls is waiting silently for a phone: play the local cue. */
  waiting?(notice: WaitingNotice): void
}

/** A session's parts, the microphone behind the MicGate (mute, echo gate); the options defaulted. */
export interface VoiceDriverDeps extends Omit<VoiceSessionDeps, 'options'> {
  readonly listener?: VoiceDriverListener
  readonly options?: Partial<VoiceOptions>
  /**
   * The device's state: the driver reads mute from it, reports its state into it and stops
   * speaking on its stop command. Without one (a test of the driver alone) it makes its own.
   */
  readonly device?: DeviceState
}

export interface RunSessionOptions {
  /** Continue this conversation (its history goes to the model); a new one otherwise. */
  readonly conversationId?: string
  /** Audio from before the session opened (the local voice detector's pre-roll), sent first. */
  readonly preRoll?: readonly Uint8Array[]
  /** Told the conversation's id as soon as it is known, e.g. to mark it live for typed messages. */
  readonly onConversation?: (conversationId: string) => void
  /**
   * Opened by a local wake: the model's input transcription must confirm the wake phrase before
   * anything it does reaches the room; if it does not, the session ends `unconfirmed` and the
   * conversation it began is not kept.
   */
  readonly confirm?: WakeCheck
}

/**
 * The voice driver: drives spoken sessions over the LiveLLM port with the same ToolSet, gate,
 * grants and persona as typed sessions (docs/voice-driver.md). It outlives sessions — mute and the
 * LED state are the device's, not a session's — and runs one session at a time. When a session opens is not
 * its decision (the local voice detector's is); when it ends is (budget, idle).
 */
export class VoiceDriver {
  readonly #deps: VoiceDriverDeps
  readonly #options: VoiceOptions
  readonly #log: Logger
  readonly #device: DeviceState
  #session: VoiceSession | undefined
  /** Mute as the driver last acted on it (the device's, followed): to act once per change. */
  #actedMuted: boolean
  #error = false
  #state: LedState = 'idle'

  constructor(deps: VoiceDriverDeps) {
    this.#deps = deps
    this.#options = { ...DEFAULT_VOICE_OPTIONS, ...deps.options }
    this.#log = deps.logger.child({ component: 'voice' })
    this.#device = deps.device ?? new DeviceState({ logger: this.#log })
    this.#actedMuted = this.#device.muted
    if (this.#actedMuted) deps.mic.setMuted(true)
    this.#device.subscribe((snapshot, change) => {
      if (change.kind === 'muted') this.#onMuted(snapshot.muted)
    })
    this.#device.onStop(() => this.stopSpeaking())
    const caps = deps.llm.capabilities
    this.#log.info(
      { model: caps.model, asyncToolCalls: caps.asyncToolCalls, resumption: caps.resumption },
      'voice driver ready',
    )
    // Said at startup as well as at every session: the household should know before it asks.
    if (!caps.asyncToolCalls) {
      this.#log.warn(
        { event: 'approvals_dead_air', model: caps.model },
        'approvals will be dead air on this model: it is silent while a phone decides',
      )
    }
  }

  get state(): LedState {
    return this.#state
  }

  get muted(): boolean {
    return this.#device.muted
  }

  get sessionRunning(): boolean {
    return this.#session !== undefined
  }

  /**
   * A session runs and is not ending: a wake now is a barge-in it takes (`bargeIn` is true), so the
   * wake stage takes it without asking the other speakers first.
   */
  get answering(): boolean {
    return this.#session !== undefined && !this.#session.ended
  }

  /**
   * Opens a session and runs it until budget, idle, error or `stop()`; resolves with a summary.
   * Rejects only for a caller's mistake (a session already running, an unknown conversation).
   */
  async runSession(opts: RunSessionOptions = {}): Promise<SessionSummary> {
    if (this.#session) throw new Error('a voice session is already running')
    const { store, clock } = this.#deps
    let conversationId = opts.conversationId
    const fresh = conversationId === undefined
    if (conversationId === undefined) {
      conversationId = store.createConversation({ channel: 'voice', at: clock.now() }).id
    } else if (!store.getConversation(conversationId)) {
      throw new NocturnError(
        'NOC_ERR_STORE_UNKNOWN_CONVERSATION',
        `no conversation ${conversationId} to continue`,
      )
    }
    opts.onConversation?.(conversationId)
    const session = new VoiceSession(
      // A session keeps the tools it opened with (a refreshed home list reaches the next one) and
      // the provider its first connection opened on.
      {
        ...this.#deps,
        llm: this.#deps.llm.session?.() ?? this.#deps.llm,
        tools: this.#deps.tools.snapshot(),
        options: this.#options,
      },
      {
        changed: () => this.#update(),
        waiting: (n) => this.#deps.listener?.waiting?.(n),
        isMuted: () => this.#device.muted,
      },
      conversationId,
    )
    this.#session = session
    this.#error = false
    this.#update()
    try {
      const summary = await session.run(opts.preRoll, opts.confirm)
      this.#error = summary.reason === 'error'
      // A false wake leaves nothing behind: the room's words were never meant for the speaker.
      if (summary.unconfirmed && fresh) store.deleteConversation(conversationId)
      return summary
    } finally {
      this.#session = undefined
      this.#update()
    }
  }

  /** Ends the running session cleanly, if there is one. */
  async stop(): Promise<SessionSummary | undefined> {
    return this.#session?.end('stopped')
  }

  /**
   * The panel's mute: authoritative (no microphone frame leaves while muted) and the provider is
   * told the stream ended; the session itself carries on.
   */
  setMuted(muted: boolean): void {
    this.#device.setMuted(muted, 'remote')
  }

  #onMuted(muted: boolean): void {
    if (muted === this.#actedMuted) return
    this.#actedMuted = muted
    this.#deps.mic.setMuted(muted)
    this.#log.info({ muted, session: this.#session !== undefined }, 'voice mute changed')
    if (muted) this.#session?.muted()
    this.#update()
  }

  /**
   * The wake phrase said over a reply: the speaker stops now (as for the long press) and the echo
   * gate opens at once rather than after its tail, so the words after the phrase reach the model.
   * False with no session live to hear them: none runs, or it is ending (what it still plays
   * stops all the same; the room is not opened for words nobody will hear).
   */
  bargeIn(): boolean {
    if (!this.#session) return false
    if (this.#session.ended) {
      this.stopSpeaking()
      return false
    }
    this.stopSpeaking()
    this.#deps.mic.hearNow?.()
    return true
  }

  onMuted(listener: (muted: boolean) => void): void {
    this.#device.subscribe((snapshot, change) => {
      if (change.kind === 'muted') listener(snapshot.muted)
    })
  }

  /** The long press: stop speaking now, without muting and without cancelling any call. */
  stopSpeaking(): void {
    if (this.#session) this.#session.stopSpeaking()
    else {
      const r = this.#deps.speaker.drop()
      this.#log.info({ discardedMs: r.discardedMs, why: 'stop button' }, 'voice playback dropped')
    }
    this.#update()
  }

  #update(): void {
    const s = this.#session
    const next = voiceState({
      sessionOpen: s !== undefined && !s.ended,
      muted: this.#device.muted,
      error: this.#error || s?.error === true,
      speaking: s?.speaking === true,
      waitingForApproval: s?.waitingForApproval === true,
    })
    if (next === this.#state) return
    this.#state = next
    this.#log.debug({ state: next }, 'voice state')
    this.#device.setActivity(next)
    this.#deps.listener?.state?.(next)
  }
}
