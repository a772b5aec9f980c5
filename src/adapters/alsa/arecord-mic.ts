import { DEVICE_BACKOFF } from '../../audio/device-backoff.js'
import { FrameSplitter } from '../../audio/frame-splitter.js'
import { bytesForMs } from '../../audio/pcm.js'
import { type MicReads, ReadCadence } from '../../audio/read-cadence.js'
import { Backoff } from '../../core/backoff.js'
import type { NocturnError } from '../../core/errors.js'
import type { AudioIn, AudioInSink, MicOptions } from '../../ports/audio.js'
import { LIVE_INPUT_RATE_HZ } from '../../ports/live-llm.js'
import { SupervisedChild } from '../child-process/supervised-child.js'
import { checkPcmName, childExitError } from './alsa-error.js'
import { pcmArgs } from './pcm-args.js'

/** `device` a named PCM, never a card index (checkPcmName). */
export interface ArecordMicOptions extends MicOptions {
  /** The recorder to run; tests point it at a stand-in to make a device misbehave. */
  readonly command?: string | undefined
  readonly env?: NodeJS.ProcessEnv | undefined
  /** When an idle burst is read after its last frame is due (ReadCadence; negative: before). */
  readonly readSlackMs?: number | undefined
}

/**
 * The microphone as an `arecord` child: S16_LE mono at 16 kHz straight from ALSA (its plug layer
 * converts from whatever the card does), stdout cut into fixed frames. A child that ends is
 * reported to the sink and restarted with backoff until `stop()`.
 */
export class ArecordMic implements AudioIn {
  readonly sampleRateHz: number
  readonly #options: ArecordMicOptions
  readonly #frameMs: number
  /** Kept across start/stop: a device that stays gone is retried ever less often. */
  readonly #backoff: Backoff
  #child: SupervisedChild<NocturnError> | undefined
  /** How often stdout is read; kept across restarts (the route decides it, not the child). */
  readonly #cadence: ReadCadence

  constructor(options: ArecordMicOptions) {
    checkPcmName(options.device, 'capture')
    this.#options = options
    this.#backoff = new Backoff(options.backoff ?? DEVICE_BACKOFF)
    this.sampleRateHz = options.sampleRateHz ?? LIVE_INPUT_RATE_HZ
    this.#frameMs = options.frameMs ?? 20
    this.#cadence = new ReadCadence({
      clock: options.clock,
      frameMs: this.#frameMs,
      resume: () => this.#child?.resumeStdout(),
      readNow: () => this.#child?.readStdoutNow(),
      ...(options.readSlackMs !== undefined && { slackMs: options.readSlackMs }),
    })
  }

  /**
   * How the recorder's output is read: in bursts (idle listening: the process wakes once a burst,
   * not once a frame) or each frame as it comes (a session). The frames and their times are the
   * same either way, and the recorder runs on: nothing is lost.
   */
  get reads(): MicReads {
    return this.#cadence
  }

  /** The running recorder's pid, for diagnostics. */
  get pid(): number | undefined {
    return this.#child?.child?.pid
  }

  async start(sink: AudioInSink): Promise<void> {
    if (this.#child) await this.stop()
    const o = this.#options
    const rate = this.sampleRateHz
    const bytesPerMs = (rate * 2) / 1000
    const clock = o.clock
    const cadence = this.#cadence
    let chunkAt = 0
    const splitter = new FrameSplitter(bytesForMs(rate, this.#frameMs), (frame, bytesAfter) => {
      cadence.frame()
      sink.frame(frame, chunkAt - bytesAfter / bytesPerMs)
      cadence.handed()
    })
    const periodUs = this.#frameMs * 1000
    this.#child = new SupervisedChild({
      command: o.command ?? 'arecord',
      // The period is one frame so audio can be read as it is captured (a session), not in
      // 125 ms lumps; idle, the cadence reads it in bursts without restarting the recorder.
      args: [
        ...pcmArgs(o.device, rate),
        `--period-time=${periodUs}`,
        `--buffer-time=${periodUs * 8}`,
      ],
      env: o.env,
      clock,
      logger: o.logger,
      backoff: this.#backoff,
      stdin: 'ignore',
      killSignal: 'SIGKILL',
      onStdout: (chunk) => {
        chunkAt = clock.now()
        splitter.push(chunk)
        return cadence.read(splitter.partial, bytesPerMs)
      },
      describeExit: (exit, stderr) => childExitError('arecord', 'capture', o.device, exit, stderr),
      // SupervisedChild respawns every exit until stop(): each failure is recoverable.
      onFailure: (error) => sink.error(error, true),
      onSpawn: () => {
        splitter.reset()
        cadence.reset()
      },
    })
    await this.#child.start()
  }

  async stop(): Promise<void> {
    const child = this.#child
    this.#child = undefined
    this.#cadence.stop()
    await child?.stop()
  }
}
