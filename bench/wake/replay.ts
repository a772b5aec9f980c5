// The detector's rule replayed on recorded per-chunk scores: other thresholds and runs of chunks
// from one scoring pass.

/** Wakes per head that the detector's rule would give on recorded per-chunk scores. */
export function replay(scores: Float32Array[], threshold: number, consecutive: number): number[] {
  const counts = scores.map(() => 0)
  const above = scores.map(() => 0)
  const n = scores[0]?.length ?? 0
  let quietUntil = -1
  for (let c = 0; c < n; c++) {
    let best = -1
    scores.forEach((s, i) => {
      above[i] = (s[c] ?? 0) >= threshold ? (above[i] ?? 0) + 1 : 0
      if ((above[i] ?? 0) >= consecutive && (best < 0 || (s[c] ?? 0) > (scores[best]?.[c] ?? 0)))
        best = i
    })
    if (best >= 0 && c >= quietUntil) {
      counts[best] = (counts[best] ?? 0) + 1
      quietUntil = c + 25 // 2 s of 80 ms chunks
      above.fill(0)
    }
  }
  return counts
}
