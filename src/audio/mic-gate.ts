import type { AudioIn, AudioInSink } from '../ports/audio.js'
import type { Clock } from '../ports/clock.js'

/** gate: the microphone sends silence while the speaker plays (plus a tail); aec: always open. */
export type EchoMode = 'gate' | 'aec'

export interface MicGateOptions {
  readonly source: AudioIn
  /** What the speaker still has to play; while it is non-zero the room hears the speaker. */
  readonly speaker: { queuedMs(): number }
  readonly clock: Clock
  readonly echo: EchoMode
  /** How long after the speaker falls silent the gate stays shut (room reverb, device latency). */
  readonly tailMs: number
  /**
   * Where mute is held (the DeviceState): read at every frame, so a mute from anywhere holds the
   * next frame back. Without it (a gate tested alone) `setMuted` sets the gate's own switch.
   */
  readonly mute?: { readonly muted: boolean }
}

/**
 * The microphone as the rest of the device sees it: mute is authoritative (no frame leaves while
 * muted), and in `gate` mode frames become silence — not nothing, so the provider's voice activity
 * detection sees a quiet room rather than a broken stream — while the speaker plays plus a tail.
 */
export class MicGate implements AudioIn {
  readonly #options: MicGateOptions
  #ownMuted = false
  #lastHeardSpeakerAt = Number.NEGATIVE_INFINITY
  /** Until then the speaker's sound does not shut the gate (our own earcon, see `hearNow`). */
  #ignoreSpeakerUntil = Number.NEGATIVE_INFINITY
  #room: ((pcm: Uint8Array, capturedAtMs: number) => void) | undefined
  // One zero buffer reused for every silent frame: no allocation on the audio path.
  #silence = new Uint8Array(0)

  constructor(options: MicGateOptions) {
    this.#options = options
  }

  get sampleRateHz(): number {
    return this.#options.source.sampleRateHz
  }

  get muted(): boolean {
    return this.#options.mute ? this.#options.mute.muted : this.#ownMuted
  }

  /** Only for a gate without `mute`: with one, the device's state is the switch. */
  setMuted(muted: boolean): void {
    if (!this.#options.mute) this.#ownMuted = muted
  }

  /** True while frames are being replaced by silence because the speaker is (or just was) playing. */
  get echoGated(): boolean {
    if (this.#options.echo !== 'gate') return false
    const now = this.#options.clock.now()
    if (this.#options.speaker.queuedMs() > 0 && now >= this.#ignoreSpeakerUntil) {
      this.#lastHeardSpeakerAt = now
    }
    return now - this.#lastHeardSpeakerAt < this.#options.tailMs
  }

  /**
   * Open the gate now, tail and all: the speaker was just dropped for a barge-in, so what the room
   * says next is the person, not the speaker's echo. With `passMs`, the speaker's sound in the next
   * `passMs` does not shut it either: the wake earcon is ours and short, and the command said in
   * the same breath must not be replaced by silence for its length and the tail.
   */
  hearNow(passMs = 0): void {
    this.#lastHeardSpeakerAt = Number.NEGATIVE_INFINITY
    this.#ignoreSpeakerUntil = this.#options.clock.now() + passMs
  }

  /**
   * Every frame the room makes, after mute (nothing while muted) and before the echo gate: the
   * wake stage hears the speaker being talked over. Lent for the call, like any frame.
   */
  onRoom(listener: (pcm: Uint8Array, capturedAtMs: number) => void): void {
    this.#room = listener
  }

  start(sink: AudioInSink): Promise<void> {
    return this.#options.source.start({
      frame: (pcm, at) => {
        if (this.muted) return
        this.#room?.(pcm, at)
        if (this.echoGated) sink.frame(this.#silent(pcm.byteLength), at)
        else sink.frame(pcm, at)
      },
      error: (e, recoverable) => sink.error(e, recoverable),
    })
  }

  stop(): Promise<void> {
    return this.#options.source.stop()
  }

  #silent(bytes: number): Uint8Array {
    if (this.#silence.byteLength < bytes) this.#silence = new Uint8Array(bytes)
    return this.#silence.subarray(0, bytes)
  }
}
