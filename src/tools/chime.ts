/** One note of a generated sound: its pitch, when it starts and how long it rings. */
interface Note {
  readonly freq: number
  readonly startMs: number
  readonly ms: number
}

/**
 * A short two-note chime as 16-bit little-endian mono PCM, generated rather than shipped as a file:
 * three rising dings (A5 then E6) with a soft attack and a decay, so it cuts through a kitchen
 * without clicking at the edges.
 */
export function chimePcm(sampleRateHz: number, repeats = 3): Uint8Array {
  const noteMs = 180
  const gapMs = 70
  const pauseMs = 400
  const pitches = [880, 1318.5]
  const perRepeat = pitches.length * (noteMs + gapMs) + pauseMs
  const notes: Note[] = []
  for (let r = 0; r < repeats; r++) {
    pitches.forEach((freq, n) => {
      notes.push({ freq, startMs: r * perRepeat + n * (noteMs + gapMs), ms: noteMs })
    })
  }
  return renderNotes(sampleRateHz, notes, perRepeat * repeats)
}

/** How long the wake earcon lasts: short enough not to talk over a command said in one breath. */
export const EARCON_MS = 120

/**
 * The wake earcon: "I heard you", the moment the wake phrase is taken — two quick rising notes
 * (C6, G6) in 120 ms, made here like the chime, at the speaker's own volume.
 */
export function earconPcm(sampleRateHz: number): Uint8Array {
  return renderNotes(
    sampleRateHz,
    [
      { freq: 1046.5, startMs: 0, ms: 50 },
      { freq: 1568, startMs: 55, ms: 65 },
    ],
    EARCON_MS,
  )
}

/**
 * "Something is wrong", when no voice can say why (no sentence made yet, no espeak-ng): three
 * falling notes (G5, E5, C5), twice — unlike the rising chime and earcon, so it is never taken
 * for "I heard you".
 */
export function troublePcm(sampleRateHz: number): Uint8Array {
  const notes: Note[] = []
  for (const startMs of [0, 800]) {
    ;[784, 659.3, 523.3].forEach((freq, n) => {
      notes.push({ freq, startMs: startMs + n * 200, ms: 170 })
    })
  }
  return renderNotes(sampleRateHz, notes, 1400)
}

function renderNotes(sampleRateHz: number, notes: readonly Note[], totalMs: number): Uint8Array {
  const total = Math.round((sampleRateHz * totalMs) / 1000)
  const pcm = new Int16Array(total)
  const attack = Math.round(sampleRateHz * 0.005)
  for (const note of notes) {
    const start = Math.round((sampleRateHz * note.startMs) / 1000)
    const noteLen = Math.round((sampleRateHz * note.ms) / 1000)
    for (let i = 0; i < noteLen && start + i < total; i++) {
      const env = Math.min(1, i / attack) * Math.exp((-4 * i) / noteLen)
      pcm[start + i] = Math.round(
        0.5 * 32767 * env * Math.sin((2 * Math.PI * note.freq * i) / sampleRateHz),
      )
    }
  }
  // Int16Array is host-endian; every board Nocturn runs on is little-endian, but be exact anyway.
  const out = new Uint8Array(total * 2)
  const view = new DataView(out.buffer)
  for (let i = 0; i < total; i++) view.setInt16(i * 2, pcm[i] as number, true)
  return out
}
