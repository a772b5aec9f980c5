import { LIVE_INPUT_RATE_HZ } from '../ports/live-llm.js'

// The model's input rate, 16-bit mono.
const MIC_BYTES_PER_MS = (LIVE_INPUT_RATE_HZ / 1000) * 2

/**
 * Microphone audio held while no connection is open (the first one opening, a resumption): the
 * user's words are not lost to a reconnect, but only the last few seconds are kept, oldest first
 * out, so a long gap cannot grow memory or replay stale speech.
 */
export class GapBuffer {
  readonly #capBytes: number
  #frames: Uint8Array[] = []
  #bytes = 0
  #dropped = 0

  constructor(capMs: number) {
    this.#capBytes = capMs * MIC_BYTES_PER_MS
  }

  /** Keeps a copy: capture adapters may reuse their buffers. */
  push(pcm: Uint8Array): void {
    this.#frames.push(new Uint8Array(pcm)) // a copy, whatever the view (Buffer's slice() is none)
    this.#bytes += pcm.byteLength
    while (this.#bytes > this.#capBytes && this.#frames.length > 0) {
      this.#bytes -= this.#frames.shift()?.byteLength ?? 0
      this.#dropped++
    }
  }

  /** Everything kept, oldest first, and how many frames were dropped; the buffer is emptied. */
  take(): { frames: Uint8Array[]; dropped: number } {
    const out = { frames: this.#frames, dropped: this.#dropped }
    this.clear()
    return out
  }

  clear(): void {
    this.#frames = []
    this.#bytes = 0
    this.#dropped = 0
  }
}
