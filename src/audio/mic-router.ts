import type { AudioIn, AudioInSink } from '../ports/audio.js'

/**
 * One microphone, two listeners: between sessions the local speech detector hears it; during a
 * session the voice driver does. The device runs continuously, so no audio is lost while a session
 * opens (restarting `arecord` would drop the syllables right after the trigger).
 */
export class MicRouter {
  readonly #source: AudioIn & { setMuted(muted: boolean): void }
  #idle?: AudioInSink
  #session?: AudioInSink
  #started = false

  constructor(source: AudioIn & { setMuted(muted: boolean): void }) {
    this.#source = source
  }

  /** Starts the device (once) with frames going to `idle` whenever no session holds them. */
  async start(idle: AudioInSink): Promise<void> {
    this.#idle = idle
    if (this.#started) return
    this.#started = true
    try {
      await this.#source.start({
        frame: (pcm, at) => (this.#session ?? this.#idle)?.frame(pcm, at),
        error: (e, recoverable) => (this.#session ?? this.#idle)?.error(e, recoverable),
      })
    } catch (err) {
      this.#started = false
      throw err
    }
  }

  async stop(): Promise<void> {
    if (!this.#started) return
    this.#started = false
    this.#session = undefined
    await this.#source.stop()
  }

  /** The microphone as a session sees it: starting and stopping only moves the route. */
  sessionMic(): AudioIn & { setMuted(muted: boolean): void } {
    const source = this.#source
    return {
      sampleRateHz: source.sampleRateHz,
      start: async (sink) => {
        this.#session = sink
      },
      stop: async () => {
        this.#session = undefined
      },
      setMuted: (muted) => source.setMuted(muted),
    }
  }
}
