import type { BackoffOptions } from '../../audio/backoff.js'
import type { SpeakerDevice } from '../../audio/speaker-device.js'
import type { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { checkPcmName, childExitError } from './alsa-error.js'
import { pcmArgs } from './pcm-args.js'
import { SupervisedChild } from './supervised-child.js'

export interface AplayDeviceOptions {
  readonly device: string
  readonly sampleRateHz: number
  readonly clock: Clock
  readonly logger: Logger
  /** aplay's own buffer and period; 40/10 ms let a 20 ms lead play without gaps. */
  readonly bufferTimeUs?: number
  readonly periodTimeUs?: number
  readonly backoff?: BackoffOptions
  readonly onError?: (error: NocturnError) => void
  readonly command?: string
  readonly env?: NodeJS.ProcessEnv
}

/**
 * The speaker as an `aplay` child reading raw PCM on stdin. `silence()` kills it — measured, that
 * is what removes stale audio (the sound server drops a dead client's queue) — and starts the next
 * one at once, so it has opened the PCM before the next reply's first syllable arrives.
 */
export class AplayDevice implements SpeakerDevice {
  readonly #child: SupervisedChild
  #lostBytes = 0
  #sinceSpawn = 0 // bytes written to the current child
  readonly #periodBytes: number
  readonly #padding: Uint8Array

  constructor(o: AplayDeviceOptions) {
    checkPcmName(o.device, 'playback')
    const bytesPerUs = (o.sampleRateHz * 2) / 1_000_000
    this.#periodBytes = Math.round((o.periodTimeUs ?? 10_000) * bytesPerUs) & ~1
    // One period to complete a partial one, plus a whole buffer so ALSA passes everything on.
    this.#padding = new Uint8Array(
      this.#periodBytes + (Math.round((o.bufferTimeUs ?? 40_000) * bytesPerUs) & ~1),
    )
    this.#child = new SupervisedChild({
      command: o.command ?? 'aplay',
      args: [
        ...pcmArgs(o.device, o.sampleRateHz),
        `--buffer-time=${o.bufferTimeUs ?? 40_000}`,
        `--period-time=${o.periodTimeUs ?? 10_000}`,
        '-',
      ],
      env: o.env,
      clock: o.clock,
      logger: o.logger,
      backoff: o.backoff,
      stdin: 'pipe',
      describeExit: (exit, stderr) => childExitError('aplay', 'playback', o.device, exit, stderr),
      onFailure: (error) => o.onError?.(error),
      onSpawn: () => {
        this.#sinceSpawn = 0
      },
    })
    this.#child.start()
  }

  get pid(): number | undefined {
    return this.#child.child?.pid
  }

  /** Bytes written while no player was running (between a crash and its restart). */
  get lostBytes(): number {
    return this.#lostBytes
  }

  write(pcm: Uint8Array): void {
    const stdin = this.#child.child?.stdin
    if (stdin?.writable) {
      stdin.write(pcm)
      this.#sinceSpawn += pcm.byteLength
    } else this.#lostBytes += pcm.byteLength
  }

  /**
   * aplay reads stdin in whole periods and ALSA keeps the last buffer until more comes, so the
   * last few ms of a reply would otherwise sound only when the next reply starts. Silence after
   * the reply carries it out; it is silence, so playing it costs nothing audible.
   */
  endOfAudio(): void {
    const stdin = this.#child.child?.stdin
    if (!stdin?.writable) return
    const partial = this.#sinceSpawn % this.#periodBytes
    const pad = this.#padding.byteLength - partial
    stdin.write(this.#padding.subarray(0, pad))
    this.#sinceSpawn += pad
  }

  silence(): void {
    this.#child.replace()
  }

  close(): Promise<void> {
    return this.#child.stop()
  }
}
