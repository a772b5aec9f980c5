/**
 * Frames further apart than this (by capture time) are not one stretch of sound: the microphone
 * was muted (no frame comes while muted) or its recorder restarted in between.
 */
const MAX_GAP_MS = 250

/**
 * A fixed ring of the most recent audio (≈500 ms), so a session that opens on detected speech can
 * send what came just before the trigger and the first syllable reaches the model. Frames are
 * copied in, so callers may reuse their buffers; memory is allocated once. A frame after a gap
 * (MAX_GAP_MS) starts the ring afresh: what was said before a mute is never sent as if it led up
 * to a wake or a press just after it.
 */
export class PreRollRing {
  readonly #buf: Uint8Array
  #end = 0 // next write position
  #filled = 0
  #lastAt: number | undefined

  constructor(capacityBytes: number) {
    this.#buf = new Uint8Array(capacityBytes & ~1)
  }

  get byteLength(): number {
    return this.#filled
  }

  /**
   * Keeps `frame`; returns true when it came after a gap and so starts the ring afresh (the
   * caller's own state of the sound before it — a detector's — is stale too).
   */
  push(frame: Uint8Array, capturedAtMs: number): boolean {
    const afterGap = this.#lastAt !== undefined && capturedAtMs - this.#lastAt > MAX_GAP_MS
    if (afterGap) this.clear()
    this.#lastAt = capturedAtMs
    const cap = this.#buf.byteLength
    let src = frame
    if (src.byteLength >= cap) src = src.subarray(src.byteLength - cap)
    const first = Math.min(src.byteLength, cap - this.#end)
    // Whole when it fits (the usual 20 ms frame): a subarray is an object per frame.
    if (first === src.byteLength) this.#buf.set(src, this.#end)
    else {
      this.#buf.set(src.subarray(0, first), this.#end)
      this.#buf.set(src.subarray(first), 0)
    }
    this.#end = (this.#end + src.byteLength) % cap
    this.#filled = Math.min(cap, this.#filled + src.byteLength)
    return afterGap
  }

  /** The buffered audio (its newest `maxBytes` at most), oldest first, as one new array. */
  snapshot(maxBytes = this.#filled): Uint8Array {
    const n = Math.min(this.#filled, maxBytes & ~1)
    const out = new Uint8Array(n)
    const cap = this.#buf.byteLength
    const start = (this.#end - n + cap) % cap
    const first = Math.min(n, cap - start)
    out.set(this.#buf.subarray(start, start + first), 0)
    if (first < n) out.set(this.#buf.subarray(0, n - first), first)
    return out
  }

  clear(): void {
    this.#end = 0
    this.#filled = 0
    this.#lastAt = undefined
  }
}
