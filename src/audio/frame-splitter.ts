/**
 * Cuts a byte stream (a child's stdout, a PortAudio read) into fixed-size frames, each lent for
 * the call to `emit` (the microphone's contract, ports/audio.ts): every frame is copied into the
 * same buffer of the splitter's own, which a frame split across chunks is also assembled in. So
 * nothing is allocated per frame, not even a view — at 50 frames a second, fresh frames (and the
 * view objects around them) were garbage that held memory until the next collection and made the
 * idle RSS a saw-tooth (bench/RESULTS.md). Whoever keeps audio copies it (the pre-roll, the gap
 * buffer). It is a plain Uint8Array, so a consumer's `slice()` copies (a Buffer's is a view).
 */
export class FrameSplitter {
  readonly #frameBytes: number
  readonly #emit: (frame: Uint8Array, bytesAfter: number) => void
  readonly #frame: Uint8Array
  #fill = 0 // bytes of a frame split across chunks already in #frame

  /** `emit` gets each frame and how many bytes of the chunk came after it (for timestamps). */
  constructor(frameBytes: number, emit: (frame: Uint8Array, bytesAfter: number) => void) {
    this.#frameBytes = frameBytes
    this.#emit = emit
    this.#frame = new Uint8Array(frameBytes)
  }

  push(chunk: Uint8Array): void {
    const n = chunk.byteLength
    const size = this.#frameBytes
    const frame = this.#frame
    let at = 0
    while (at < n) {
      // A byte loop, not set(subarray): a subarray is an object per frame. 640 bytes is ~1 µs.
      const take = Math.min(size - this.#fill, n - at)
      for (let i = 0; i < take; i++) frame[this.#fill + i] = chunk[at + i] as number
      this.#fill += take
      at += take
      if (this.#fill < size) return
      this.#fill = 0
      this.#emit(frame, n - at)
    }
  }

  /** Bytes of a frame not yet complete (its rest is in the next chunk). */
  get partial(): number {
    return this.#fill
  }

  /** Forgets a half-assembled frame (after a restart, its continuation never comes). */
  reset(): void {
    this.#fill = 0
  }
}
