/**
 * Cuts a byte stream (a child's stdout, a PortAudio read) into fixed-size frames. A frame is a view,
 * valid only during `emit` (the microphone's contract, ports/audio.ts): of the chunk when the frame
 * lies inside it, else of one buffer of its own in which a frame split across chunks is assembled.
 * Nothing is allocated per frame — at 50 frames a second, fresh 640-byte buffers were freed only
 * when the young generation filled, and piled up as a saw-tooth of several MB of RSS between
 * collections (bench/RESULTS.md). Whoever keeps audio copies it (the pre-roll, the gap buffer).
 */
export class FrameSplitter {
  readonly #frameBytes: number
  readonly #emit: (frame: Uint8Array, bytesAfter: number) => void
  readonly #partial: Uint8Array
  #partialFill = 0

  /** `emit` gets each frame and how many bytes of the chunk came after it (for timestamps). */
  constructor(frameBytes: number, emit: (frame: Uint8Array, bytesAfter: number) => void) {
    this.#frameBytes = frameBytes
    this.#emit = emit
    this.#partial = new Uint8Array(frameBytes)
  }

  push(chunk: Uint8Array): void {
    let at = 0
    const n = chunk.byteLength
    if (this.#partialFill > 0) {
      const take = Math.min(this.#frameBytes - this.#partialFill, n)
      this.#partial.set(chunk.subarray(0, take), this.#partialFill)
      this.#partialFill += take
      at = take
      if (this.#partialFill < this.#frameBytes) return
      this.#partialFill = 0
      this.#emit(this.#partial, n - at)
    }
    while (n - at >= this.#frameBytes) {
      const end = at + this.#frameBytes
      // A plain Uint8Array even when the chunk is a Buffer: a consumer's `slice()` must copy, and
      // Buffer's `slice()` is a view.
      this.#emit(new Uint8Array(chunk.buffer, chunk.byteOffset + at, this.#frameBytes), n - end)
      at = end
    }
    if (at < n) {
      this.#partial.set(chunk.subarray(at), 0)
      this.#partialFill = n - at
    }
  }

  /** Forgets a half-assembled frame (after a restart, its continuation never comes). */
  reset(): void {
    this.#partialFill = 0
  }
}
