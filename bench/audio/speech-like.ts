/**
 * Five seconds of synthetic "speech" that is never silent (drop.md §2): syllables of 80–250 ms,
 * a gliding f0 of 110–260 Hz with two harmonics, an envelope that never reaches zero, so any
 * silence of 1 ms or more inside playback is a real gap.
 */
export function speechLike(seconds: number, rate = 24_000): Uint8Array {
  const n = Math.round(seconds * rate)
  const out = new Int16Array(n)
  let phase = 0
  let i = 0
  let seed = 7
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff
  }
  while (i < n) {
    const len = Math.round((0.08 + rand() * 0.17) * rate)
    const f0a = 110 + rand() * 150
    const f0b = 110 + rand() * 150
    for (let k = 0; k < len && i < n; k++, i++) {
      const f0 = f0a + ((f0b - f0a) * k) / len
      phase += (2 * Math.PI * f0) / rate
      const env = 0.45 + 0.55 * Math.sin((Math.PI * k) / len)
      const x = Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.25 * Math.sin(3 * phase)
      out[i] = Math.round(env * x * 7000) + (x >= 0 ? 300 : -300)
    }
  }
  return new Uint8Array(out.buffer)
}
