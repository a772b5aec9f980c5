// How loud the wake phrase must be (issue 22): `BENCH_ONLY=level npm run bench -- wake-word`.
// A speaker across the room hears the phrase quieter than the bench's clips (peak −6 dBFS), and a
// household would expect a "microphone gain" setting to help. This asks whether the head cares
// about the level itself or only about how far the voice stands above the room: every wake clip
// ("hey jarvis" and "alexa", every voice at four speeds, 1 s either side) at peak −6, −20, −35 and
// −50 dBFS, over digital silence and over a room floor of pink noise at a fixed −70 and −60 dBFS
// RMS (a quiet room through a MEMS microphone, and a fridge or a fan), and the −70 dBFS room
// again with 20 dB of digital gain after it (what a gain setting would do: the floor rises with the
// voice, and a loud voice clips). Scored by the real detector, head alone, threshold 0.5, two
// chunks in a row.
import { HEADS, pinnedDetector } from '../../test/helpers/wake.js'
import { bytes, concat, pinkNoise, rms, utterance, voices, WAKE_PHRASES } from './corpus.js'

const RATE = 16_000
const PEAKS_DB = [-6, -20, -35, -50]
/** The room floor under the phrase (none: digital silence), and the gain applied after it. */
const ROOMS: readonly { floorDb?: number; gainDb: number; label: string }[] = [
  { gainDb: 0, label: 'digital silence' },
  { floorDb: -70, gainDb: 0, label: 'room floor −70 dBFS RMS' },
  { floorDb: -60, gainDb: 0, label: 'room floor −60 dBFS RMS' },
  { floorDb: -70, gainDb: 20, label: 'floor −70, then 20 dB of gain' },
]

/**
 * `clip` scaled to `peakDb` with 1 s either side, `floor` (already at its level) under all, then
 * `gainDb` more on the sum, clipped as a 16-bit capture would be.
 */
function heard(
  clip: Int16Array,
  peakDb: number,
  floor: Int16Array | undefined,
  gainDb: number,
): Int16Array {
  const padded = concat([new Int16Array(RATE), clip, new Int16Array(RATE)])
  const peak = clip.reduce((m, v) => Math.max(m, Math.abs(v)), 1)
  const voice = (32767 * 10 ** (peakDb / 20)) / peak
  const after = 10 ** (gainDb / 20)
  return Int16Array.from(padded, (v, i) => {
    const x = (v * voice + (floor?.[i % floor.length] ?? 0)) * after
    return Math.max(-32768, Math.min(32767, Math.round(x)))
  })
}

/** Pink noise with its RMS at `db` dBFS. */
function floorAt(db: number, noise: Int16Array): Int16Array {
  const g = (32768 * 10 ** (db / 20)) / rms(noise)
  return Int16Array.from(noise, (v) => Math.round(v * g))
}

export async function levelBench(out: (s: string) => void): Promise<void> {
  const vs = voices([130, 150, 170, 190])
  const clips = WAKE_PHRASES.flatMap((p) =>
    vs.map((v) => ({ head: p.head, pcm: utterance(v, p.text, `wake-${p.head}-${v.name}`) })),
  )
  const wanted = HEADS.filter((h) => WAKE_PHRASES.some((p) => p.head === h.name))
  let woke: string[] = []
  const d = await pinnedDetector({
    onWake: (w) => woke.push(w.phrase),
    phrases: wanted.map((h) => ({ phrase: h.name, file: h.file, threshold: 0.5 })),
  })
  const pink = pinkNoise(20, 11)
  const per = clips.length / WAKE_PHRASES.length
  out(
    `\nwake clips by level: ${clips.length} clips, missed hey_jarvis / alexa (of ${per} each), threshold 0.5`,
  )
  out(`| phrase peak | ${ROOMS.map((r) => r.label).join(' | ')} |`)
  out(`|---|${ROOMS.map(() => '---').join('|')}|`)
  let clock = 0
  for (const peakDb of PEAKS_DB) {
    const cells: string[] = []
    for (const room of ROOMS) {
      const floor = room.floorDb === undefined ? undefined : floorAt(room.floorDb, pink)
      const missed: Record<string, number> = {}
      for (const clip of clips) {
        d.reset()
        woke = []
        clock =
          (await d.scoreRecorded(bytes(heard(clip.pcm, peakDb, floor, room.gainDb)), clock)) +
          10_000
        if (!woke.includes(clip.head)) missed[clip.head] = (missed[clip.head] ?? 0) + 1
      }
      cells.push(WAKE_PHRASES.map((p) => missed[p.head] ?? 0).join(' / '))
    }
    out(`| ${peakDb} dBFS | ${cells.join(' | ')} |`)
  }
  await d.close()
}
