import type { BackoffPolicy } from '../core/backoff.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from './clock.js'

/**
 * AudioIn / AudioOut: 16-bit little-endian mono PCM frames in from a microphone, and out to a
 * speaker through a buffer that can be dropped at once and that reports what was really played.
 */
export interface AudioIn {
  readonly sampleRateHz: number
  start(sink: AudioInSink): Promise<void>
  stop(): Promise<void>
}

/** What a microphone adapter is made with, whatever reaches the card (arecord, PortAudio). */
export interface MicOptions {
  /** The capture device, by name (ALSA: `plughw:CARD=…,DEV=0` or a name from /etc/asound.conf). */
  readonly device: string
  readonly clock: Clock
  readonly logger: Logger
  /** Default: the live model's input rate. */
  readonly sampleRateHz?: number
  /** 20–40 ms frames, the size the model wants them in. */
  readonly frameMs?: number
  /** How a failing device is retried. */
  readonly backoff?: BackoffPolicy
}

export interface AudioInSink {
  /**
   * One frame, valid only during the call: a source may hand on a view of a buffer it reuses for
   * the next frame (nothing allocated per frame, src/audio/frame-splitter.ts). A consumer that
   * keeps audio copies it.
   */
  frame(pcm: Uint8Array, capturedAtMs: number): void
  /**
   * The source failed. `recoverable: true` — the source is already restarting itself (a recorder
   * respawned, a stalled device reopened) and frames will resume after a gap: a consumer carries
   * on. `false` — the source has given up: no frame comes until it is started again.
   */
  error(error: Error, recoverable: boolean): void
}

export interface AudioOut {
  readonly sampleRateHz: number
  /** Queue PCM for playback. Never blocks. */
  write(pcm: Uint8Array): void
  /**
   * The reply's audio is complete (the model said so): play out what is queued without waiting
   * for more. A device that plays in whole periods holds a reply's last partial one back until
   * something follows it; told now, the speaker can follow it with silence long before it is due.
   */
  endOfReply(): void
  /** Discard everything not yet played and silence the device now. */
  drop(): DropReport
  /** Milliseconds of audio really played since the last drop (written − still queued). */
  playedMs(): number
  /** Milliseconds of audio written but not yet played. */
  queuedMs(): number
  close(): Promise<void>
}

export interface DropReport {
  /** Milliseconds of audio that were discarded unplayed. */
  readonly discardedMs: number
  readonly playedMs: number
}
