import { DEVICE_BACKOFF } from '../../audio/device-backoff.js'
import { FrameSplitter } from '../../audio/frame-splitter.js'
import { bytesForMs } from '../../audio/pcm.js'
import { Backoff } from '../../core/backoff.js'
import { errorText, NocturnError } from '../../core/errors.js'
import type { AudioIn, AudioInSink, MicOptions } from '../../ports/audio.js'
import type { TimerHandle } from '../../ports/clock.js'
import { LIVE_INPUT_RATE_HZ } from '../../ports/live-llm.js'
import { loadNaudiodon, type NaudiodonStream } from './naudiodon.js'
import { resolvePortAudioDevice } from './portaudio-devices.js'

/**
 * The microphone through naudiodon → PortAudio. Chunks are one frame (naudiodon's default read is
 * half a second), `closeOnError` is off so an overflow is a status and not a dead stream, and a
 * failing stream is reported and reopened with backoff.
 */
export class PortAudioMic implements AudioIn {
  readonly sampleRateHz: number
  readonly #options: MicOptions
  readonly #frameMs: number
  #stream: NaudiodonStream | undefined
  #retry: TimerHandle | undefined
  #sink: AudioInSink | undefined

  constructor(options: MicOptions) {
    this.#options = options
    this.sampleRateHz = options.sampleRateHz ?? LIVE_INPUT_RATE_HZ
    this.#frameMs = options.frameMs ?? 20
  }

  async start(sink: AudioInSink): Promise<void> {
    await this.stop()
    this.#sink = sink
    const backoff = new Backoff(this.#options.backoff ?? DEVICE_BACKOFF)
    // Unknown devices and a missing naudiodon throw here, synchronously, so start() rejects.
    this.#open(sink, backoff, true)
  }

  #open(sink: AudioInSink, backoff: Backoff, first: boolean): void {
    const o = this.#options
    const pa = loadNaudiodon()
    let device: { id: number }
    try {
      device = resolvePortAudioDevice(pa, o.device, 'capture')
    } catch (e) {
      if (first) throw e
      this.#fail(sink, backoff, e as NocturnError, 0)
      return
    }
    const frameBytes = bytesForMs(this.sampleRateHz, this.#frameMs)
    const bytesPerMs = (this.sampleRateHz * 2) / 1000
    let chunkAt = 0
    const splitter = new FrameSplitter(frameBytes, (frame, after) =>
      sink.frame(frame, chunkAt - after / bytesPerMs),
    )
    const stream = new pa.AudioIO({
      inOptions: {
        channelCount: 1,
        sampleFormat: pa.SampleFormat16Bit,
        sampleRate: this.sampleRateHz,
        deviceId: device.id,
        closeOnError: false,
        framesPerBuffer: frameBytes / 2,
        highwaterMark: frameBytes,
        maxQueue: 8,
      },
    })
    const openedAt = o.clock.now()
    stream.on('data', (chunk) => {
      chunkAt = o.clock.now()
      splitter.push(chunk)
    })
    stream.on('error', (e) => {
      if (this.#stream !== stream) return
      this.#stream = undefined
      closeQuietly(stream)
      const error = new NocturnError(
        'NOC_ERR_AUDIO_DEVICE_FAILED',
        `PortAudio capture device "${o.device}" failed: ${e.message}`,
        { cause: e },
      )
      this.#fail(sink, backoff, error, o.clock.now() - openedAt)
    })
    this.#stream = stream
    stream.start()
  }

  #fail(sink: AudioInSink, backoff: Backoff, error: NocturnError, livedMs: number): void {
    const delay = backoff.next(livedMs)
    this.#options.logger.warn(
      {
        event: 'audio_stream_failed',
        device: this.#options.device,
        restartInMs: delay,
        err: errorText(error),
      },
      'audio stream failed; reopening',
    )
    sink.error(error, true)
    this.#retry = this.#options.clock.setTimeout(() => {
      this.#retry = undefined
      if (this.#sink === sink) this.#open(sink, backoff, false)
    }, delay)
  }

  async stop(): Promise<void> {
    this.#sink = undefined
    if (this.#retry !== undefined) this.#options.clock.clearTimeout(this.#retry)
    this.#retry = undefined
    const s = this.#stream
    this.#stream = undefined
    if (s) closeQuietly(s)
  }
}

/**
 * destroy() stops the JS side at once; quit() then stops the PortAudio stream. Stock naudiodon's
 * abort() throws (it passes a callback the native side refuses), so it is not used.
 */
export function closeQuietly(stream: NaudiodonStream, done: () => void = () => {}): void {
  try {
    stream.destroy()
    stream.quit(done)
  } catch {
    // Already closed: nothing left to release.
    done()
  }
}
