import type { ServerFrame } from './frames.js'

/** A client frame as the fake server received it. */
export interface ReceivedFrame {
  /** Connection number, from 0 in the order they were opened. */
  readonly conn: number
  /** The top-level key (`setup`, `realtimeInput`, `toolResponse`, …), or `?` when not JSON. */
  readonly key: string
  readonly frame: Record<string, unknown>
  readonly binary: boolean
}

/**
 * One step a connection's script plays. Steps run in order; `waitFor` consumes client frames in the
 * order they arrived, so a frame the client sent before the step began still counts.
 */
export type Step =
  | { readonly send: ServerFrame; readonly binary?: boolean }
  /** Raw bytes (e.g. a frame that is not JSON). */
  | { readonly raw: string; readonly binary?: boolean }
  /** A canned phrase (or PCM), as audio frames of `chunkMs` with its transcription alongside. */
  | {
      readonly speak: string | Uint8Array
      readonly chunkMs?: number
      /** Wait this long between audio frames (0: as fast as the socket takes them). */
      readonly paceMs?: number
      readonly transcript?: string | false
    }
  | {
      readonly waitFor: string | ((f: ReceivedFrame) => boolean)
      readonly timeoutMs?: number
    }
  /**
   * The service's input transcription: once this connection has heard `afterAudioMs` of
   * microphone audio (all of it, from its open), `text` is sent as `inputTranscription` — only if
   * `setup` asked for it (`inputAudioTranscription`), as the service does; otherwise nothing is
   * sent and the script records an error.
   */
  | { readonly transcribe: string; readonly afterAudioMs?: number; readonly timeoutMs?: number }
  /** Wait until this connection has heard `heardMs` of microphone audio, all of it from its open. */
  | { readonly untilHeardMs: number; readonly timeoutMs?: number }
  | { readonly delayMs: number }
  /** A closing handshake with this code and reason. */
  | { readonly close: number; readonly reason?: string }
  /** Cut the TCP connection with no close frame (the client sees 1006). */
  | { readonly drop: true }

export interface Script {
  /** `answer` (default): reply to `setup` with `setupComplete`; `ignore`: never reply. */
  readonly handshake?: 'answer' | 'ignore'
  readonly steps: readonly Step[]
}
