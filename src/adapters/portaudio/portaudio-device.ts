import type { SpeakerDevice } from '../../audio/speaker-device.js'
import { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import { type Clock, monotonicNow, type TimerHandle } from '../../ports/clock.js'
import { loadNaudiodon, type NaudiodonStream } from './naudiodon.js'
import { resolvePortAudioDevice } from './portaudio-devices.js'
import { closeQuietly } from './portaudio-mic.js'

export interface PortAudioDeviceOptions {
  readonly device: string
  readonly sampleRateHz: number
  readonly clock: Clock
  readonly logger: Logger
  /** PortAudio's buffer in frames (see the defaults below). */
  readonly framesPerBuffer?: number | undefined
  /** How far ahead of the device's play position naudiodon is kept fed, reply or silence. */
  readonly aheadMs?: number | undefined
  /** How often the feed is looked at. */
  readonly tickMs?: number | undefined
  readonly onError?: (error: NocturnError) => void
}

/**
 * 40 ms PortAudio buffers: PortAudio then keeps about 100 ms in the ALSA buffer below it, and that
 * part is thrown away when a stream is closed (measured on the pulse plugin, bench/RESULTS.md), so
 * it is a cushion against late timers that a drop does not play. Fed 80 ms ahead every 20 ms:
 * naudiodon's own queue stays empty, since every whole buffer handed over fits in ALSA at once.
 */
export const PORTAUDIO_FRAMES_PER_BUFFER_MS = 40
export const PORTAUDIO_AHEAD_MS = 80
export const PORTAUDIO_FEED_TICK_MS = 20
/** A stream fed only silence this long is replaced, so the clock estimate never drifts far. */
const RENEW_IDLE_MS = 30_000

/**
 * The speaker as a naudiodon output stream, fed by the clock in whole PortAudio buffers — reply
 * audio when there is some, silence when not (hardware/audio.md has the measurements):
 * - naudiodon's callback blocks when its queue is empty; a stream left unfed between replies
 *   underruns, and the recovery lost the first 10–12 ms of every next reply. Fed silence, it never
 *   waits, and a reply's start queues behind at most `aheadMs` of silence.
 * - naudiodon cannot flush: its quit plays out every queued chunk. So audio waits here, in JS,
 *   and goes to naudiodon only as the device needs it; `silence()` throws the rest away and swaps
 *   the stream for a fresh one (what the old one still holds is in the ALSA buffer closing drops).
 * - The callback passes on whole buffers only, so a reply's last partial buffer is completed with
 *   silence when the reply ends (`endOfAudio`) or when the device would otherwise run dry.
 */
export class PortAudioDevice implements SpeakerDevice {
  readonly #options: PortAudioDeviceOptions
  readonly #clock: Clock
  readonly #deviceId: number
  readonly #frames: number
  readonly #bufferBytes: number
  readonly #aheadBytes: number
  readonly #tickMs: number
  readonly #bytesPerMs: number
  #stream: NaudiodonStream | undefined
  #closed = false
  #timer: TimerHandle | undefined
  // Audio handed over and not yet passed to naudiodon.
  #pending: Uint8Array[] = []
  #head = 0
  #pendingBytes = 0
  #flush = false // the audio so far is all there is: complete its last buffer with silence
  // The current stream: bytes passed to it, and the time from which it plays them at the rate.
  #written = 0
  #anchor = 0
  #audioAt = 0 // when reply audio last went to the stream
  #fed = false // the current stream has had audio: from then on it is never left to run dry
  #accepted = 0 // bytes naudiodon has passed to its native queue (its write callbacks)
  readonly #tick = () => {
    this.#timer = undefined
    this.#feed()
  }

  constructor(options: PortAudioDeviceOptions) {
    this.#options = options
    this.#clock = options.clock
    this.#frames =
      options.framesPerBuffer ??
      Math.round((options.sampleRateHz * PORTAUDIO_FRAMES_PER_BUFFER_MS) / 1000)
    this.#bufferBytes = this.#frames * 2
    this.#bytesPerMs = (options.sampleRateHz * 2) / 1000
    this.#aheadBytes = Math.round((options.aheadMs ?? PORTAUDIO_AHEAD_MS) * this.#bytesPerMs)
    this.#tickMs = options.tickMs ?? PORTAUDIO_FEED_TICK_MS
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
        // With closeOnError an underrun would kill the stream.
        closeOnError: false,
        framesPerBuffer: this.#frames,
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
    this.#written = 0
    this.#fed = false
    this.#anchor = this.#audioAt = monotonicNow(this.#clock)
    return stream
  }

  write(pcm: Uint8Array): void {
    if (this.#closed || pcm.byteLength === 0) return
    this.#pending.push(pcm)
    this.#pendingBytes += pcm.byteLength
    this.#flush = false
    if (!this.#fed) {
      // A fresh stream plays from its first audio (until then its callback waits, harmlessly:
      // the device has not started); the first stream of a process took over a second to start
      // taking audio, which a clock started at the open would have counted as played.
      this.#fed = true
      this.#anchor = monotonicNow(this.#clock)
    }
    this.#feed()
  }

  endOfAudio(): void {
    if (this.#closed) return
    this.#flush = true
    this.#feed()
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
    this.#pending = []
    this.#head = 0
    this.#pendingBytes = 0
    this.#flush = false
    // Closed first: opening a stream takes milliseconds, during which the old one would play on.
    if (this.#stream) closeQuietly(this.#stream)
    this.#stream = this.#open()
  }

  /**
   * Resolves when naudiodon has let the stream go (it plays out the silence it holds first), or
   * after a second: a stream whose device vanished never finishes, and must not hold up shutdown.
   */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#pending = []
    this.#pendingBytes = 0
    const s = this.#stream
    this.#stream = undefined
    if (!s) return
    await new Promise<void>((resolve) => {
      const bound = this.#clock.setTimeout(resolve, 1000)
      closeQuietly(s, () => {
        this.#clock.clearTimeout(bound)
        resolve()
      })
    })
  }

  /** Tops the stream up to `aheadMs` past its estimated play position, in whole buffers. */
  #feed(): void {
    if (this.#closed || !this.#stream) return
    const now = monotonicNow(this.#clock)
    if (!this.#fed) return
    if (this.#pendingBytes === 0 && now - this.#audioAt >= RENEW_IDLE_MS) {
      // Only silence for a while: a fresh stream, left unfed until the next reply, restarts the
      // clock estimate from the device's start, so the estimate never drifts far from the device.
      closeQuietly(this.#stream)
      this.#stream = this.#open()
      return
    }
    const played = (now - this.#anchor) * this.#bytesPerMs
    if (played > this.#written) {
      // The device ran dry (a late timer): it waited for us, and plays on from now.
      this.#anchor = now - this.#written / this.#bytesPerMs
    }
    const ahead = this.#written - Math.min(played, this.#written)
    const buf = this.#bufferBytes
    const room = Math.floor((this.#aheadBytes - ahead) / buf)
    // A partial buffer of reply waits for the rest unless the reply is over or the device could
    // run dry before the tick after this one (padding it sooner put silence inside a reply whose
    // next chunk was a moment away). Silence goes only where no reply is left to play, and only what keeps the
    // device above one buffer under the target, so a reply queues behind as little as it can.
    const urgent = ahead < 1.5 * this.#tickMs * this.#bytesPerMs
    const whole = Math.floor(this.#pendingBytes / buf)
    const partial = this.#pendingBytes - whole * buf > 0 && (this.#flush || urgent) ? 1 : 0
    const audio = Math.min(room, whole + partial)
    const left = this.#pendingBytes - Math.min(this.#pendingBytes, audio * buf)
    const silent = left === 0 && audio === 0 ? room : 0
    if (audio + silent > 0) {
      const out = Buffer.alloc((audio + silent) * buf) // zeros: silence where no audio fills it
      if (this.#take(out, audio * buf) > 0) this.#audioAt = now
      this.#written += out.byteLength
      this.#stream.write(out, () => {
        this.#accepted += out.byteLength
      })
    }
    this.#timer ??= this.#clock.setTimeout(this.#tick, this.#tickMs)
  }

  /** Moves up to `max` bytes of pending audio into the start of `out`; returns how many. */
  #take(out: Buffer, max: number): number {
    let at = 0
    while (at < max && this.#pendingBytes > 0) {
      const chunk = this.#pending[0] as Uint8Array
      const n = Math.min(max - at, chunk.byteLength - this.#head)
      out.set(chunk.subarray(this.#head, this.#head + n), at)
      at += n
      this.#head += n
      this.#pendingBytes -= n
      if (this.#head === chunk.byteLength) {
        this.#pending.shift()
        this.#head = 0
      }
    }
    if (this.#pendingBytes === 0) this.#flush = false
    return at
  }
}
