import { describe, expect, it } from 'vitest'
import { enrol, WindowRecorder } from '../../../src/adapters/openwakeword/enrolment.js'
import { EMBEDDING_SIZE } from '../../../src/adapters/openwakeword/features.js'
import { predict } from '../../../src/adapters/openwakeword/logistic.js'

// Enrolment's own rules on fixture features: a stand-in for the detector hands the recorder
// windows chosen by the clip's loudness, so what `enrol` makes of a clip said in one breath with a
// command is seen without the models (the real detector's enrolment: verifier.test.ts).
const SIZE = 2 * EMBEDDING_SIZE
const PHRASE = 1000
const BREATH = 2000
const OTHER = 3000

/** A window near direction `dim` (0: the phrase alone, 1: the phrase run into a command). */
function window(dim: number, k: number): Float32Array {
  const w = new Float32Array(SIZE)
  for (let i = 0; i < SIZE; i++) w[i] = Math.sin(i * 12.9898 + k * 78.233) * 0.3
  if (dim >= 0) w[dim] = 3 + Math.sin(k) * 0.3
  else w[0] = w[1] = -2
  return w
}

/** Constant-level audio: the stand-in knows a clip by its loudest sample. */
function clip(level: number, seconds = 1): Uint8Array {
  const pcm = new Int16Array(16_000 * seconds).fill(level)
  return new Uint8Array(pcm.buffer)
}

function standIn(recorder: WindowRecorder) {
  let k = 0
  return {
    reset: () => {},
    settled: async () => {},
    scoreRecorded: async (audio: Uint8Array) => {
      const pcm = new Int16Array(audio.buffer, audio.byteOffset, audio.length >> 1)
      const level = pcm.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
      // A clip cut short ("hey jar…") or said slower or faster is a near-miss: not the phrase.
      const whole = pcm.filter((v) => v !== 0).length >= 15_000
      // The head: sure of the phrase alone (0.9), half-sure of it run into a command (0.35,
      // between the gate and the threshold), deaf to the rest; five warm-up chunks first.
      const [dim, head] =
        whole && Math.abs(level - PHRASE) < 300
          ? [0, 0.9]
          : whole && Math.abs(level - BREATH) < 300
            ? [1, 0.35]
            : [-1, 0.02]
      for (let i = 0; i < 12; i++) {
        recorder.score(window(i < 5 ? -1 : dim, k++), i < 5 ? 0 : head)
      }
      return 0
    },
  }
}

describe('enrolment with clips said in one breath with a command', () => {
  it('learns the one-breath windows from the gate up, and never cuts those clips short as negatives', async () => {
    const recorder = new WindowRecorder()
    const e = await enrol(
      { detector: standIn(recorder), recorder, threshold: 0.5, consecutive: 2, gate: 0.3 },
      [
        ...[1, 2, 3].map((i) => ({ name: `phrase ${i}`, pcm: clip(PHRASE) })),
        ...[1, 2].map((i) => ({ name: `breath ${i}`, pcm: clip(BREATH, 3), oneBreath: true })),
      ],
      [{ name: 'room', pcm: clip(OTHER, 5) }],
    )
    expect(e.clips.map((c) => c.heard)).toEqual([true, true, true, true, true])
    // A one-breath window it never saw is accepted as the phrase alone is, the room turned away.
    expect(predict(e.model, window(1, 999))).toBeGreaterThan(0.55)
    expect(predict(e.model, window(0, 998))).toBeGreaterThan(0.55)
    expect(predict(e.model, window(-1, 997))).toBeLessThan(0.45)
  })
})
