/** S16LE mono arithmetic: two bytes a sample, one channel, shared by every audio piece. */
const BYTES_PER_SAMPLE = 2

export function bytesForMs(sampleRateHz: number, ms: number): number {
  // Whole samples only: a frame that splits a sample would shift every later sample's byte order.
  return Math.round((sampleRateHz * ms) / 1000) * BYTES_PER_SAMPLE
}

export function msForBytes(sampleRateHz: number, bytes: number): number {
  return (bytes / BYTES_PER_SAMPLE / sampleRateHz) * 1000
}

/**
 * `bytes` of quiet S16LE noise in ±`amplitude`, the same for the same seed: a room between
 * sentences, for probes (doctor) and for measuring what listening costs when nothing is said.
 */
export function quietNoise(bytes: number, amplitude: number, seed = 3): Uint8Array {
  const out = new Uint8Array(bytes)
  const view = new DataView(out.buffer)
  let s = seed
  for (let i = 0; i + 1 < out.length; i += 2) {
    s = (s * 1_103_515_245 + 12_345) & 0x7fffffff
    view.setInt16(i, (s % (2 * amplitude)) - amplitude, true)
  }
  return out
}
