/**
 * Cuts a byte stream (a child's stdout, a PortAudio read) into fixed-size frames. Every frame is a
 * buffer of its own: the chunk may be a reader's reused buffer (stdout-socket.ts), and the
 * receiver may keep what it is given (the pre-roll does). A 20 ms copy costs nothing beside a read.
 */
export class FrameSplitter {
  readonly #frameBytes: number
  readonly #emit: (frame: Uint8Array, bytesAfter: number) => void
  #partial: Uint8Array | undefined
  #partialFill = 0

  /** `emit` gets each frame and how many bytes of the chunk came after it (for timestamps). */
  constructor(frameBytes: number, emit: (frame: Uint8Array, bytesAfter: number) => void) {
    this.#frameBytes = frameBytes
    this.#emit = emit
  }

  push(chunk: Uint8Array): void {
    let at = 0
    const n = chunk.byteLength
    if (this.#partial) {
      const take = Math.min(this.#frameBytes - this.#partialFill, n)
      this.#partial.set(chunk.subarray(0, take), this.#partialFill)
      this.#partialFill += take
      at = take
      if (this.#partialFill < this.#frameBytes) return
      const frame = this.#partial
      this.#partial = undefined
      this.#emit(frame, n - at)
    }
    while (n - at >= this.#frameBytes) {
      const end = at + this.#frameBytes
      // Not chunk.slice(): on a Buffer that is a view, not a copy.
      const frame = new Uint8Array(this.#frameBytes)
      frame.set(chunk.subarray(at, end))
      this.#emit(frame, n - end)
      at = end
    }
    if (at < n) {
      this.#partial = new Uint8Array(this.#frameBytes)
      this.#partial.set(chunk.subarray(at), 0)
      this.#partialFill = n - at
    }
  }

  /** Forgets a half-assembled frame (after a restart, its continuation never comes). */
  reset(): void {
    this.#partial = undefined
    this.#partialFill = 0
  }
}
