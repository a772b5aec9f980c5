/**
 * The microphone's 16 kHz to the 24 kHz the Realtime API takes (its PCM input has one rate), as a
 * stream: linear interpolation at exact thirds of an input sample (24/16 = 3/2), carrying the last
 * sample and the phase from one frame to the next so frame edges leave no seam. Upsampling speech
 * this way adds nothing above 8 kHz that matters to recognition; the cost is in `npm run bench`.
 * The returned view is reused by the next call: the caller encodes it at once.
 */
export class Upsampler16to24 {
  #prev = 0
  /**
   * Position of the next output sample, in thirds of an input sample, from `#prev` (a silent
   * sample before the first frame: the stream starts one sample late, and every 20 ms frame in
   * is exactly 20 ms out).
   */
  #q3 = 0
  #out = new Int16Array(0)

  push(pcm: Uint8Array): Uint8Array {
    const n = pcm.byteLength >> 1
    const x =
      pcm.byteOffset % 2 === 0
        ? new Int16Array(pcm.buffer, pcm.byteOffset, n)
        : new Int16Array(pcm.slice(0, n * 2).buffer)
    const end = 3 * n
    const count = this.#q3 < end ? Math.ceil((end - this.#q3) / 2) : 0
    if (this.#out.length < count) this.#out = new Int16Array(count + 16)
    const out = this.#out
    let q = this.#q3
    let k = 0
    for (; q < end; q += 2, k++) {
      const i = (q / 3) | 0
      const f = q - 3 * i
      // e[i] is #prev for i = 0, else x[i - 1].
      const a = i === 0 ? this.#prev : (x[i - 1] as number)
      const b = x[i] as number
      out[k] = f === 0 ? a : f === 1 ? (a + (b - a) / 3) | 0 : (a + (2 * (b - a)) / 3) | 0
    }
    this.#q3 = q - end
    if (n > 0) this.#prev = x[n - 1] as number
    return new Uint8Array(out.buffer, 0, k * 2)
  }
}
