/** S16LE mono arithmetic: two bytes a sample, one channel, shared by every audio piece. */
const BYTES_PER_SAMPLE = 2

export function bytesForMs(sampleRateHz: number, ms: number): number {
  // Whole samples only: a frame that splits a sample would shift every later sample's byte order.
  return Math.round((sampleRateHz * ms) / 1000) * BYTES_PER_SAMPLE
}

export function msForBytes(sampleRateHz: number, bytes: number): number {
  return (bytes / BYTES_PER_SAMPLE / sampleRateHz) * 1000
}
