// What a perfect transcriber would write for a stretch of a bench's stream: the second opinion's
// floor, for the benches that count spoken replies.
import type { Spoken } from './corpus.js'

const RATE = 16_000

/**
 * The words a perfect transcriber would give for the audio from `fromMs` to `toMs` of a stream:
 * each utterance's words spread over its length by their letters, a word heard when its middle
 * falls inside. A real transcriber mishears; this is the matcher's floor, not a model's.
 */
export function heardText(timeline: readonly Spoken[], fromMs: number, toMs: number): string {
  const words: string[] = []
  for (const u of timeline) {
    const a = (u.from / RATE) * 1000
    const b = (u.to / RATE) * 1000
    if (b < fromMs || a > toMs) continue
    const ws = u.text.split(/\s+/)
    const total = ws.reduce((n, w) => n + w.length + 1, 0)
    let at = 0
    for (const w of ws) {
      const mid = a + ((at + (w.length + 1) / 2) / total) * (b - a)
      at += w.length + 1
      if (mid >= fromMs && mid <= toMs) words.push(w)
    }
  }
  return words.join(' ')
}
