import { DEFAULT_IDLE_MS, DEFAULT_SESSION_BUDGET_MS } from '../core/defaults.js'
import type { TalkDeps } from '../core/talk-deps.js'
import type { AudioIn, AudioOut } from '../ports/audio.js'
import type { LiveLLM } from '../ports/live-llm.js'
import type { ExpiryReason } from './session-timers.js'

export interface VoiceOptions {
  /** Wall-clock budget of one session. */
  readonly budgetMs: number
  /** The session ends after this long with nobody speaking and nothing playing. */
  readonly idleMs: number
  /** Microphone audio kept while no connection is open (opening, resuming); oldest dropped first. */
  readonly gapBufferMs: number
  /** Fresh connections tried after a connection is lost before the session gives up. */
  readonly maxReconnectAttempts: number
  /** After `goAway`, resume at the end of the current turn, but no later than this before the cut. */
  readonly goAwayMarginMs: number
  /** At session end, how long withdrawn calls get to unwind before the transcript is closed. */
  readonly endDrainMs: number
}

/** The household's defaults (core/defaults.ts), so a driver run without a configuration matches one with it. */
export const DEFAULT_VOICE_OPTIONS: VoiceOptions = Object.freeze({
  budgetMs: DEFAULT_SESSION_BUDGET_MS,
  idleMs: DEFAULT_IDLE_MS,
  // A wake's pre-roll (up to 1.5 s) plus the first connect (about 2 s on a slow board and network).
  gapBufferMs: 5_000,
  maxReconnectAttempts: 3,
  goAwayMarginMs: 5_000,
  endDrainMs: 2_000,
})

/** The microphone as the driver needs it: frames, and an authoritative mute (the MicGate). */
export interface VoiceMic extends AudioIn {
  setMuted(muted: boolean): void
  /** End the echo gate's silence now, tail and all (a barge-in by the wake phrase). */
  hearNow?(passMs?: number): void
}

export interface VoiceSessionDeps extends TalkDeps<LiveLLM> {
  readonly mic: VoiceMic
  readonly speaker: AudioOut
  readonly options: VoiceOptions
}

/** What the device shows while a model without asynchronous calls waits for a phone. */
export interface WaitingNotice {
  readonly callId: string
  readonly approvalId: string
  readonly tool: string
  readonly action: string
  readonly audience: string
}

/** `unconfirmed`: a local wake the model's own transcription did not confirm (a false wake). */
export type SessionEndReason = ExpiryReason | 'stopped' | 'error' | 'unconfirmed'

export interface SessionSummary {
  readonly conversationId: string
  readonly reason: SessionEndReason
  readonly startedAt: number
  readonly endedAt: number
  readonly turns: number
  readonly calls: { readonly answered: number; readonly withdrawn: number }
  readonly resumptions: number
  readonly freshConnections: number
  readonly messagesWritten: number
  /**
   * A local wake the model never confirmed, whatever ended the session (`unconfirmed`, or an
   * error or a stop while it was still being asked): nothing said was meant for the speaker.
   */
  readonly unconfirmed: boolean
  /** The model's tokens this session was billed, summed over its turns and connections. */
  readonly tokens: number
}

export interface SessionHooks {
  /** Something the LED shows changed (speaking, waiting, open). */
  changed(): void
  waiting(notice: WaitingNotice): void
  isMuted(): boolean
}
