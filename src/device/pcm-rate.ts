/**
 * A whole sentence's 16-bit mono PCM from `fromHz` to `toHz` by linear interpolation: enough for a
 * spoken sentence (espeak-ng's 22.05 kHz, a provider's speech) on the speaker's rate; a stream's
 * resampling is the audio path's, not this. Same rate: the input itself.
 */
export function atRate(pcm: Uint8Array, fromHz: number, toHz: number): Uint8Array {
  if (fromHz === toHz) return pcm
  const n = pcm.byteLength >> 1
  const src = new DataView(pcm.buffer, pcm.byteOffset, n * 2)
  const count = Math.floor((n * toHz) / fromHz)
  const out = new Uint8Array(count * 2)
  const dst = new DataView(out.buffer)
  for (let k = 0; k < count; k++) {
    const at = (k * fromHz) / toHz
    const i = Math.floor(at)
    const a = src.getInt16(i * 2, true)
    const b = i + 1 < n ? src.getInt16((i + 1) * 2, true) : a
    dst.setInt16(k * 2, Math.round(a + (b - a) * (at - i)), true)
  }
  return out
}
