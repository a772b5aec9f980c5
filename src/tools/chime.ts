/**
 * A short two-note chime as 16-bit little-endian mono PCM, generated rather than shipped as a file:
 * three rising dings (A5 then E6) with a soft attack and a decay, so it cuts through a kitchen
 * without clicking at the edges.
 */
export function chimePcm(sampleRateHz: number, repeats = 3): Uint8Array {
  const noteMs = 180
  const gapMs = 70
  const pauseMs = 400
  const notes = [880, 1318.5]
  const perRepeat = notes.length * (noteMs + gapMs) + pauseMs
  const total = Math.round((sampleRateHz * perRepeat * repeats) / 1000)
  const pcm = new Int16Array(total)
  const noteLen = Math.round((sampleRateHz * noteMs) / 1000)
  const attack = Math.round(sampleRateHz * 0.005)
  for (let r = 0; r < repeats; r++) {
    notes.forEach((freq, n) => {
      const start = Math.round((sampleRateHz * (r * perRepeat + n * (noteMs + gapMs))) / 1000)
      for (let i = 0; i < noteLen && start + i < total; i++) {
        const env = Math.min(1, i / attack) * Math.exp((-4 * i) / noteLen)
        pcm[start + i] = Math.round(
          0.5 * 32767 * env * Math.sin((2 * Math.PI * freq * i) / sampleRateHz),
        )
      }
    })
  }
  // Int16Array is host-endian; every board Nocturn runs on is little-endian, but be exact anyway.
  const out = new Uint8Array(total * 2)
  const view = new DataView(out.buffer)
  for (let i = 0; i < total; i++) view.setInt16(i * 2, pcm[i] as number, true)
  return out
}
