import type { SpeakerDevice } from '../../audio/speaker-device.js'
import { errorText, NocturnError } from '../../core/errors.js'
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
  /** How far ahead of the device's play position naudiodon is fed while a reply plays. */
  readonly aheadMs?: number | undefined
  /** How often the feed is looked at while a reply plays. */
  readonly tickMs?: number | undefined
  readonly onError?: (error: NocturnError) => void
}

/**
 * 300 ms PortAudio buffers. PortAudio asks ALSA for one buffer of latency, and the pulse plugin
 * (a Linux desktop's default device) makes that three periods: 900 ms below naudiodon, which a
 * closed stream throws away unplayed (hardware/audio.md). Fed up to two buffers ahead, less a
 * margin for the clock estimate: PortAudio's callback then always finds a free period, so it waits
 * for JavaScript rather than for ALSA, and closing the stream is immediate. What the device holds
 * stays above about 240 ms (two buffers less one and a tick), the cushion against a late timer or
 * a late PortAudio thread (bench/RESULTS.md: with 40 ms buffers 22–32 gaps a minute under two CPU
 * hogs; with 200 ms none in 5 minutes under two, but some under three; with 300 ms none under
 * three). The price: a reply starts once its first 300 ms are here (95 ms on the bench).
 */
export const PORTAUDIO_FRAMES_PER_BUFFER_MS = 300
export const PORTAUDIO_AHEAD_MS = 2 * PORTAUDIO_FRAMES_PER_BUFFER_MS - 20
const PORTAUDIO_FEED_TICK_MS = 40
/** Audio this long past its estimated end has been heard (the estimate runs a little early). */
const HEARD_MS = 30
/**
 * A stream whose audio has all played is replaced this long after it (fed silence meanwhile), so
 * that its ALSA buffer, three buffers on the pulse plugin, holds only silence when it is closed.
 * Audio that comes sooner goes to a fresh stream at once.
 */
const RETIRE_BUFFERS = 4

/**
 * The speaker as naudiodon output streams, one per run of audio, fed by the clock (hardware/audio.md
 * has the measurements):
 * - naudiodon's callback passes on whole buffers and blocks while its queue is short of one. A
 *   stream that ran dry underruns, and the recovery loses the first buffer written after it. A
 *   stream that was never fed does not underrun (on the pulse plugin it starts with its first
 *   buffer), and takes a reply at once. So each reply goes to a fresh stream: once a stream's audio
 *   has played out it is closed and a new one opened, left unfed until the next reply.
 * - naudiodon cannot flush: its quit plays out every queued chunk. So audio waits here, in JS,
 *   and goes to naudiodon only `aheadMs` ahead of the play position; `silence()` throws the rest
 *   away and swaps the stream for a fresh one (what the old one holds is in the ALSA buffer, which
 *   closing drops).
 * - A reply's last partial buffer is completed with silence when the reply ends (`endOfAudio`) or
 *   when the device would otherwise run dry; a stream that has not started yet waits for the rest.
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
  readonly #retireMs: number
  #stream: NaudiodonStream | undefined
  #closed = false
  #timer: TimerHandle | undefined
  // Audio handed over and not yet passed to naudiodon.
  #pending: Uint8Array[] = []
  #head = 0
  #pendingBytes = 0
  #flush = false // the audio so far is all there is: complete its last buffer with silence
  // The current stream: bytes passed to it, how many of them end its last audio, and when it
  // started playing (its first whole buffer), undefined before.
  #written = 0
  #audioEnd = 0
  #startedAt: number | undefined
  #taken = 0 // bytes of the current stream naudiodon has passed to its native queue
  #accepted = 0 // the same over all streams (the stall watch's progress)
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
    this.#aheadBytes = this.#even((options.aheadMs ?? PORTAUDIO_AHEAD_MS) * this.#bytesPerMs)
    this.#tickMs = options.tickMs ?? PORTAUDIO_FEED_TICK_MS
    this.#retireMs = (RETIRE_BUFFERS * this.#bufferBytes) / this.#bytesPerMs
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
        { event: 'audio_stream_failed', device: this.#options.device, err: errorText(e) },
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
    this.#audioEnd = 0
    this.#startedAt = undefined
    this.#taken = 0
    return stream
  }

  write(pcm: Uint8Array): void {
    if (this.#closed || pcm.byteLength === 0) return
    this.#pending.push(pcm)
    this.#pendingBytes += pcm.byteLength
    this.#flush = false
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
    this.#replace()
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

  /** Closed first: on a card only one stream can be open, and the old one would play on. */
  #replace(): void {
    if (this.#stream) closeQuietly(this.#stream)
    this.#stream = this.#open()
  }

  /** When the first `bytes` of the current stream will have played (a monotonic time). */
  #playedBy(bytes: number): number {
    return (this.#startedAt ?? Number.POSITIVE_INFINITY) + bytes / this.#bytesPerMs
  }

  /**
   * Passes audio on up to `aheadMs` past the estimated play position, completes a last partial
   * buffer with silence when it must, and replaces a stream whose audio has all played.
   */
  #feed(): void {
    if (this.#closed || !this.#stream) return
    const now = monotonicNow(this.#clock)
    // Everything this stream had has played (and naudiodon took all of it: closing drops what it
    // has not): the stream is running dry, or soon will. The next audio goes to a fresh stream,
    // which starts with it instead of losing its first buffer.
    const heard = now >= this.#playedBy(this.#audioEnd) + HEARD_MS && this.#taken === this.#written
    if (
      heard &&
      (this.#pendingBytes > 0 || now >= this.#playedBy(this.#audioEnd) + this.#retireMs)
    ) {
      this.#replace()
      if (this.#pendingBytes === 0) return
    }
    const buf = this.#bufferBytes
    const started = this.#startedAt !== undefined
    const played = started
      ? Math.min((now - (this.#startedAt as number)) * this.#bytesPerMs, this.#written)
      : 0
    const room = this.#even(played + this.#aheadBytes - this.#written)
    const audio = Math.min(this.#pendingBytes, Math.max(0, room))
    const partial = (this.#written + audio) % buf
    // What the device holds in whole buffers, the only ones PortAudio has passed on.
    const held = this.#written + audio - partial - played
    // With no audio left to give, silence completes the last buffer at the end of a reply, and
    // keeps a started stream from running dry until it is retired: closing a stream drops what its
    // ALSA buffer holds, so that must be silence by then, and what comes after its audio pushes
    // it out.
    const low = started && held < 2 * this.#tickMs * this.#bytesPerMs
    const pad =
      this.#pendingBytes === audio && ((this.#flush && partial > 0) || low) ? buf - partial : 0
    if (audio + pad > 0) {
      const out = Buffer.alloc(audio + pad) // zeros: silence where no audio fills it
      this.#take(out, audio)
      this.#written += out.byteLength
      if (audio > 0) this.#audioEnd = this.#written - pad
      if (!started && this.#written >= buf) this.#startedAt = now
      const stream = this.#stream
      stream.write(out, () => {
        this.#accepted += out.byteLength
        if (stream === this.#stream) this.#taken += out.byteLength
      })
    }
    if (this.#startedAt !== undefined || this.#pendingBytes > 0) {
      this.#timer ??= this.#clock.setTimeout(this.#tick, this.#tickMs)
    }
  }

  /** Moves `n` bytes of pending audio into the start of `out`. */
  #take(out: Buffer, n: number): void {
    let at = 0
    while (at < n) {
      const chunk = this.#pending[0] as Uint8Array
      const k = Math.min(n - at, chunk.byteLength - this.#head)
      out.set(chunk.subarray(this.#head, this.#head + k), at)
      at += k
      this.#head += k
      this.#pendingBytes -= k
      if (this.#head === chunk.byteLength) {
        this.#pending.shift()
        this.#head = 0
      }
    }
    if (this.#pendingBytes === 0) this.#flush = false
  }

  #even(bytes: number): number {
    return Math.floor(bytes / 2) * 2
  }
}
