import { readFileSync } from 'node:fs'
import { DEVICE_BACKOFF } from '../../audio/device-backoff.js'
import type { SpeakerDevice } from '../../audio/speaker-device.js'
import { Backoff, type BackoffPolicy } from '../../core/backoff.js'
import type { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { SupervisedChild } from '../child-process/supervised-child.js'
import { checkPcmName, childExitError } from './alsa-error.js'
import { pcmArgs } from './pcm-args.js'

export const DEFAULT_BUFFER_TIME_US = 1_000_000
export const DEFAULT_PERIOD_TIME_US = 20_000

export interface AplayDeviceOptions {
  readonly device: string
  readonly sampleRateHz: number
  readonly clock: Clock
  readonly logger: Logger
  /**
   * aplay's own buffer and period. The buffer holds the paced speaker's whole lead with room to
   * spare, so aplay never blocks on the device and reads stdin as soon as a period is there.
   */
  readonly bufferTimeUs?: number
  readonly periodTimeUs?: number
  /**
   * Silence written after a reply's last period is completed (default one period). A file PCM
   * holds back a whole buffer until more comes, so tests on one ask for a buffer's worth.
   */
  readonly endPaddingUs?: number
  readonly backoff?: BackoffPolicy
  readonly onError?: (error: NocturnError) => void
  readonly command?: string | undefined
  readonly env?: NodeJS.ProcessEnv | undefined
}

/**
 * The speaker as an `aplay` child reading raw PCM on stdin. `silence()` kills it — measured, that
 * is what removes stale audio (the sound server drops a dead client's queue) — and starts the next
 * one at once, so it has opened the PCM before the next reply's first syllable arrives.
 */
export class AplayDevice implements SpeakerDevice {
  readonly #child: SupervisedChild<NocturnError>
  #lostBytes = 0
  #sinceSpawn = 0 // bytes written to the current child
  readonly #periodBytes: number
  readonly #padding: Uint8Array

  constructor(options: AplayDeviceOptions) {
    checkPcmName(options.device, 'playback')
    const bytesPerUs = (options.sampleRateHz * 2) / 1_000_000
    const periodUs = options.periodTimeUs ?? DEFAULT_PERIOD_TIME_US
    this.#periodBytes = Math.round(periodUs * bytesPerUs) & ~1
    // Up to one period to complete a partial one, then the padding that carries it out.
    this.#padding = new Uint8Array(
      this.#periodBytes + (Math.round((options.endPaddingUs ?? periodUs) * bytesPerUs) & ~1),
    )
    this.#child = new SupervisedChild({
      command: options.command ?? 'aplay',
      args: [
        ...pcmArgs(options.device, options.sampleRateHz),
        `--buffer-time=${options.bufferTimeUs ?? DEFAULT_BUFFER_TIME_US}`,
        `--period-time=${periodUs}`,
        // Start on the first period, not (aplay's default) a full buffer: the lead never fills it.
        `--start-delay=${periodUs}`,
        '-',
      ],
      env: options.env,
      clock: options.clock,
      logger: options.logger,
      backoff: new Backoff(options.backoff ?? DEVICE_BACKOFF),
      stdin: 'pipe',
      // Killed, not asked: what it still holds must not sound (see silence()).
      killSignal: 'SIGKILL',
      describeExit: (exit, stderr) =>
        childExitError('aplay', 'playback', options.device, exit, stderr),
      onFailure: (error) => options.onError?.(error),
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
   * aplay reads stdin in whole periods, so the last few ms of a reply would otherwise sound only
   * when the next reply starts. Silence after the reply completes the period and carries it out;
   * it is silence, so playing it costs nothing audible.
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

  /** Bytes aplay has read so far (its `rchar`): stdin, mostly. Stays put when aplay is hung. */
  progress(): number | undefined {
    const pid = this.pid
    if (pid === undefined) return undefined
    try {
      const io = readFileSync(`/proc/${pid}/io`, 'latin1')
      const m = /^rchar: (\d+)$/m.exec(io)
      return m ? Number(m[1]) : undefined
    } catch {
      return undefined // gone, or no /proc: the watch cannot tell
    }
  }

  /** aplay's state in `/proc/<pid>/stat` is T or t: stopped (SIGSTOP, SIGTSTP) or held by a tracer. */
  frozen(): boolean {
    const pid = this.pid
    if (pid === undefined) return false
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
      // The command name in parentheses may hold spaces: the state follows its closing one.
      const state = stat.charAt(stat.lastIndexOf(')') + 2)
      return state === 'T' || state === 't'
    } catch {
      return false // gone: the supervisor restarts it
    }
  }

  close(): Promise<void> {
    return this.#child.stop()
  }
}
