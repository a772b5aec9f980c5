// Where the chunks fall (issue 46 item 2): each "hey jarvis" clip (the fixtures, and every TTS
// voice of bench/wake/corpus.ts at four speeds) shifted by 0–70 ms, scored with the second phase
// always on; prints the clips and shifts where the aligned phase's best run of two chunks stays
// far below what the second phase holds. `node --import tsx bench/wake/offset-search.ts`.
import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FIXTURES, phasedDetector, wavPcm } from '../../test/helpers/wake.js'
import { bytes, concat, utterance, voices } from './corpus.js'

const RATE = 16_000
const a: number[] = []
const b: number[] = []
const d = await phasedDetector({
  onWake: () => {},
  threshold: 0.99,
  offsetPhase: 0,
  onScores: (s) => a.push(s[0] ?? 0),
  onOffsetScores: (s) => b.push(s[0] ?? 0),
})
/** The best score a run of two chunks holds. */
const run2 = (s: readonly number[]) =>
  Math.max(0, ...s.slice(1).map((v, i) => Math.min(v, s[i] ?? 0)))

const clips: { name: string; pcm: Int16Array }[] = readdirSync(FIXTURES)
  .filter((f) => f.startsWith('hey_jarvis'))
  .map((f) => {
    const u = wavPcm(join(FIXTURES, f))
    return { name: f, pcm: new Int16Array(u.buffer, u.byteOffset, u.byteLength >> 1) }
  })
if (process.env.SEARCH_TTS !== '0') {
  for (const v of voices([130, 150, 170, 190])) {
    clips.push({ name: v.name, pcm: utterance(v, 'hey jarvis', `wake-hey_jarvis-${v.name}`) })
  }
}
/** Silence before each clip: 1 s (the bench's clips), more to see the start's part. */
const LEAD = Number(process.env.SEARCH_LEAD_MS ?? 1000) * 16
const dump: { clip: string; ms: number; a: number[]; b: number[] }[] | undefined = process.env
  .SEARCH_DUMP
  ? []
  : undefined
let at = 0
for (const clip of clips) {
  const row: string[] = []
  for (let ms = 0; ms < 80; ms += 10) {
    a.length = 0
    b.length = 0
    d.reset()
    const pcm = concat([new Int16Array(LEAD + ms * 16), clip.pcm, new Int16Array(RATE)])
    at = (await d.scoreRecorded(bytes(pcm), at)) + 10_000
    row.push(`${ms}:${run2(a).toFixed(3)}/${run2(b).toFixed(3)}`)
    if (dump) dump.push({ clip: clip.name, ms, a: [...a], b: [...b] })
  }
  process.stdout.write(`${clip.name} ${row.join(' ')}\n`)
}
await d.close()
if (dump && process.env.SEARCH_DUMP) writeFileSync(process.env.SEARCH_DUMP, JSON.stringify(dump))
