import type { SpeakerDevice } from '../../audio/speaker-device.js'
import { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import { loadNaudiodon, type NaudiodonStream } from './naudiodon.js'
import { resolvePortAudioDevice } from './portaudio-devices.js'
import { closeQuietly } from './portaudio-mic.js'

export interface PortAudioDeviceOptions {
  readonly device: string
  readonly sampleRateHz: number
  readonly logger: Logger
  /** PortAudio's period; 10 ms. */
  readonly framesPerBuffer?: number
  readonly onError?: (error: NocturnError) => void
}

/**
 * The speaker as a naudiodon output stream. naudiodon cannot flush: its quit/abort play out every
 * queued chunk. So `silence()` destroys the stream and opens a new one at once; what still plays
 * is the paced speaker's lead, never a whole reply — which is why this backend keeps a small lead.
 */
export class PortAudioDevice implements SpeakerDevice {
  readonly #options: PortAudioDeviceOptions
  readonly #deviceId: number
  #stream: NaudiodonStream | undefined
  #closed = false
  #sinceOpen = 0
  #accepted = 0 // bytes naudiodon has passed to its native queue (its write callbacks)
  readonly #periodBytes: number
  readonly #padding: Uint8Array

  constructor(options: PortAudioDeviceOptions) {
    this.#options = options
    this.#periodBytes = (options.framesPerBuffer ?? Math.round(options.sampleRateHz / 100)) * 2
    this.#padding = new Uint8Array(this.#periodBytes * 4)
    const pa = loadNaudiodon()
    this.#deviceId = resolvePortAudioDevice(pa, options.device, 'playback').id
    this.#stream = this.#open()
  }

  #open(): NaudiodonStream {
    const pa = loadNaudiodon()
    const stream = new pa.AudioIO({
      outOptions: {
        channelCount: 1,
        sampleFormat: pa.SampleFormat16Bit,
        sampleRate: this.#options.sampleRateHz,
        deviceId: this.#deviceId,
        // With closeOnError an underrun between replies would kill the stream.
        closeOnError: false,
        framesPerBuffer:
          this.#options.framesPerBuffer ?? Math.round(this.#options.sampleRateHz / 100),
        maxQueue: 16,
      },
    })
    stream.on('error', (e) => {
      if (this.#stream !== stream || this.#closed) return
      this.#options.logger.warn(
        { device: this.#options.device, err: e.message },
        'audio stream failed; reopening',
      )
      this.#options.onError?.(
        new NocturnError(
          'NOC_ERR_AUDIO_DEVICE_FAILED',
          `PortAudio playback device "${this.#options.device}" failed: ${e.message}`,
          { cause: e },
        ),
      )
      this.silence()
    })
    stream.start()
    this.#sinceOpen = 0
    return stream
  }

  write(pcm: Uint8Array): void {
    if (!this.#stream) return
    const n = pcm.byteLength
    this.#stream.write(Buffer.from(pcm.buffer, pcm.byteOffset, n), () => {
      this.#accepted += n
    })
    this.#sinceOpen += n
  }

  /**
   * PortAudio's callback waits for a whole buffer before it passes a partial one on, so the end of
   * a reply would sound only with the next one. Silence after it carries it out.
   */
  endOfAudio(): void {
    if (!this.#stream) return
    const pad = this.#padding.byteLength - (this.#sinceOpen % this.#periodBytes)
    this.write(this.#padding.subarray(0, pad))
  }

  /**
   * Bytes the native queue has taken. It takes a write only when PortAudio's callback has made
   * room, so a stream whose callback stopped stops this count once its queue is full.
   */
  progress(): number {
    return this.#accepted
  }

  silence(): void {
    if (this.#closed) return
    const old = this.#stream
    this.#stream = this.#open()
    if (old) closeQuietly(old)
  }

  async close(): Promise<void> {
    this.#closed = true
    const s = this.#stream
    this.#stream = undefined
    if (s) closeQuietly(s)
  }
}
