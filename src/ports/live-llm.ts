import type { Message } from '../core/conversation.js'
import type { Persona } from '../core/persona.js'
import type { ToolDeclaration } from '../core/tool.js'
import type { DropReport } from './audio.js'

/**
 * LiveLLM: a spoken session with a speech-to-speech model — audio streams in, audio and events
 * stream out, until it is closed. Unlike `LLM` there is no turn boundary the client controls.
 */
export interface LiveLLM {
  /** What the configured model can do; the voice driver branches on this, never on the adapter. */
  readonly capabilities: LiveCapabilities
  open(setup: LiveSetup, events: LiveEvents): Promise<LiveSession>
  /**
   * What one voice session opens all its connections through. Absent: the LiveLLM itself. Several
   * providers behind one LiveLLM (the failover) return one that keeps the provider the session's
   * first connection opened on, its capabilities then that provider's: a session never switches
   * provider in the middle, not even for a fresh reconnection.
   */
  session?(): LiveLLM
}

export interface LiveCapabilities {
  readonly model: string
  /** Tool calls may be declared non-blocking; interim results (`willContinue`) and `scheduling` work. */
  readonly asyncToolCalls: boolean
  /** The provider transcribes both sides, so a spoken session can be kept as a chat. */
  readonly transcription: boolean
  /**
   * The person's words may be transcribed after the reply to them has begun (marked `beforeReply`):
   * a reply that begins with no words before it is then held for them. False: a reply's words come
   * before it or never, and nothing is held.
   */
  readonly lateTranscription: boolean
  /** A connection can be resumed with a handle after `goAway` or a drop. */
  readonly resumption: boolean
}

export interface LiveSetup {
  readonly persona: Persona
  readonly tools: readonly ToolDeclaration[]
  /** Declare every tool non-blocking. Only meaningful when `capabilities.asyncToolCalls`. */
  readonly nonBlockingTools: boolean
  /** Earlier messages of the conversation, for a fresh connection (never sent on resumption). */
  readonly history?: readonly Message[] | undefined
  /** Resume a previous connection; history is then not re-sent. */
  readonly resumeHandle?: string | undefined
}

/** Input audio: 16-bit little-endian mono PCM at 16 kHz. */
export const LIVE_INPUT_RATE_HZ = 16_000
/** Output audio: 16-bit little-endian mono PCM at 24 kHz. */
export const LIVE_OUTPUT_RATE_HZ = 24_000

/**
 * One connection. It is open from the moment `open()` resolves until `close()` is called or the
 * far side closes it (`closed` is then reported, once); it never reopens. What each send does when
 * the connection is not open is part of the contract (test/voice/live-llm-contract.ts runs it
 * against every implementation):
 */
export interface LiveSession {
  /**
   * Send one microphone frame (16 kHz S16LE mono). Never blocks and never throws. While open the
   * frame is handed to the transport at once (no queue of its own); when not open it is dropped —
   * live audio is worthless later, and keeping the audio of a gap between connections is the
   * caller's business.
   */
  sendAudio(pcm: Uint8Array): void
  /** The microphone stopped (mute): tell the provider the stream ended. Never throws; a no-op
   *  when not open. */
  endAudio(): void
  /**
   * Answer a tool call (interim with `willContinue`, or final). When the connection is not open
   * nothing is sent and it throws a `NocturnError` with code `NOC_ERR_LIVE_CLOSED`: unlike audio,
   * an answer must not vanish, so the caller keeps it for a resumed connection. Whether an answer
   * may be sent at all (exactly one final, none for a withdrawn call) is the caller's rule.
   */
  respond(response: LiveToolResponse): void
  /**
   * The speaker dropped the rest of the model's reply (barge-in, the stop button): the room heard
   * only `report.playedMs` of it and never `report.discardedMs`. A provider that keeps its own
   * record of the reply's audio cuts that record to what was heard, so the model does not believe
   * it said what nobody heard; a provider without such a record ignores it. Never throws.
   */
  playbackCut(report: DropReport): void
  /** Close the connection; resolves when the socket is closed. Calling it again is harmless. */
  close(): Promise<void>
}

export type Scheduling = 'INTERRUPT' | 'WHEN_IDLE' | 'SILENT'

export interface LiveToolResponse {
  readonly id: string
  readonly name: string
  /** The result the model reads: `{ ... }` on success, `{ error: "…" }` on failure. */
  readonly response: Record<string, unknown>
  /** An interim result; a final one follows. Only for non-blocking calls. */
  readonly willContinue?: boolean
  /** Only for non-blocking calls. */
  readonly scheduling?: Scheduling
}

export interface LiveToolCall {
  readonly id: string
  readonly name: string
  readonly args: unknown
}

/** Everything a live session reports. One provider frame may produce several events. */
export interface LiveEvents {
  audio(pcm: Uint8Array): void
  /**
   * What the person said. `place.beforeReply`: these words were said before the reply in progress
   * (or the last one) was started — they led to it, however late their transcription came (a
   * provider that transcribes asynchronously, docs/openai.md). Without it: words as they come, in
   * the order heard (during a reply: a barge-in or the next question, written after it).
   */
  inputTranscription(text: string, place?: InputPlace): void
  outputTranscription(text: string): void
  /** The user talked over the model: what was generated and not yet played is stale. */
  interrupted(): void
  generationComplete(): void
  turnComplete(): void
  toolCall(calls: readonly LiveToolCall[]): void
  toolCallCancellation(ids: readonly string[]): void
  /** The provider will close this connection soon. */
  goAway(timeLeftMs: number | undefined): void
  resumptionUpdate(handle: string | undefined, resumable: boolean): void
  usage(totalTokens: number): void
  /** The connection ended, by us or by the far side. */
  closed(info: LiveCloseInfo): void
}

/** Where late input words belong (`LiveEvents.inputTranscription`). */
export interface InputPlace {
  readonly beforeReply: boolean
}

export interface LiveCloseInfo {
  readonly code: number
  readonly reason: string
  /** True when `close()` was called by us. */
  readonly byClient: boolean
}
