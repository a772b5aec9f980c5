import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  HouseholdStage,
  readHouseholdVerifier,
} from '../../../src/adapters/openwakeword/household-stage.js'
import {
  predict,
  trainLogistic,
  trainLogisticAsync,
} from '../../../src/adapters/openwakeword/logistic.js'
import {
  encodeWindows,
  sha256File,
  verifierRecord,
  writeVerifier,
} from '../../../src/adapters/openwakeword/verifier.js'
import { HEADS } from '../../helpers/wake.js'

const JARVIS = HEADS.find((h) => h.name === 'hey_jarvis')?.file ?? ''
const D = 16 * 96

/**
 * A window: `centre` on a third of the features (the phrase's), `other` on another third (what a
 * near-miss has that the phrase has not), with a little seeded noise.
 */
function around(centre: number, seed: number, other = 0.2, rest = 0.2): Float32Array {
  const w = new Float32Array(D)
  let s = seed
  for (let j = 0; j < D; j++) {
    s = (s * 1103515245 + 12345) % 2 ** 31
    w[j] = (j % 3 === 0 ? centre : j % 3 === 1 ? other : rest) + (s / 2 ** 31 - 0.5) * 0.1
  }
  return w
}
/** The near-miss: the phrase's features, and some of its own. */
const nearMiss = (seed: number) => around(1, seed, 1)
/**
 * The household's phrase in a noisy room: its own features fainter, and the noise spread over the
 * rest — some of it where the near-miss differs from the phrase.
 */
const inNoise = (seed: number) => around(NOISY[0], seed, NOISY[1], NOISY[2])
const NOISY = [0.7, 0.9, 0.4] as const

/** An enrolled verifier that accepts both the phrase and the near-miss (it never heard one). */
function enrolledFile(dir: string, noisy?: Float32Array[]): string {
  const x = [1, 2, 3].map((s) => around(1, s))
  const neg = [4, 5, 6].map((s) => around(-1, s))
  const model = trainLogistic([...x, ...neg], [1, 1, 1, 0, 0, 0])
  const file = join(dir, 'hey_jarvis_v0.1.verifier.json')
  writeVerifier(
    file,
    verifierRecord({
      phrase: 'hey jarvis',
      head: 'hey_jarvis_v0.1.onnx',
      headSha256: sha256File(JARVIS),
      window: 16,
      gate: 0.3,
      model,
      enrolment: {
        at: '2026-12-05T00:00:00.000Z',
        clips: 3,
        positiveWindows: 3,
        negativeWindows: 3,
        leaveOneOutAccepted: 3,
        negativesAccepted: 0,
        negativesChecked: 0,
      },
      ...(noisy && { noisy: encodeWindows(noisy) }),
    }),
  )
  return file
}

/** A stage running the enrolled verifier of a fresh file, as the detector builds it. */
function enrolledStage(o: { headFile?: string; noisy?: Float32Array[] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-stage-'))
  const file = enrolledFile(dir, o.noisy)
  const stage = new HouseholdStage({
    phrase: 'hey jarvis',
    verifier: readHouseholdVerifier(file, JARVIS),
    file,
    ...(o.headFile && { headFile: o.headFile }),
  })
  return { stage, file }
}

describe('the household stage: a verifier the household can teach while it runs', () => {
  it('taught a marked near-miss, refuses it, still accepts the phrase, and writes the file a restart loads', async () => {
    const { stage, file } = enrolledStage()
    const near = nearMiss(11)
    const phrase = around(1, 12)
    expect(stage.score(near, 0.9)).toBeGreaterThan(0.7)
    const own = stage.score(phrase, 0.9)
    const out = await stage.teach(
      { negatives: [nearMiss(21), nearMiss(22)], positives: [around(1, 23)] },
      0.7,
      new Date('2026-12-05T18:00:00Z'),
    )
    expect(out).toMatchObject({ learnt: true, negatives: 2, positives: 1, refused: 2 })
    expect(stage.score(near, 0.9)).toBeLessThan(0.7)
    expect(stage.score(phrase, 0.9)).toBeGreaterThan(0.7)
    // Held where it was, not pushed up: a lesson does not widen what the verifier accepts.
    expect(stage.score(phrase, 0.9)).toBeLessThanOrEqual(own + 0.02)
    const again = readHouseholdVerifier(file, JARVIS)
    expect(again.record.taught).toEqual({
      at: '2026-12-05T18:00:00.000Z',
      negatives: 2,
      positives: 1,
    })
    expect(again.score(near)).toBeLessThan(0.7)
  })

  it('a new enrolment written while it runs is what the next lesson starts from, never undone by it', async () => {
    const { stage, file } = enrolledStage({ headFile: JARVIS })
    // `nocturn wake enroll` writes a new enrolment over the file while the speaker runs.
    const old = readHouseholdVerifier(file, JARVIS).record
    const enrolledAt = '2026-12-06T09:00:00.000Z'
    writeVerifier(file, { ...old, enrolment: { ...old.enrolment, at: enrolledAt, clips: 5 } })
    const out = await stage.teach(
      { negatives: [nearMiss(31)], positives: [around(1, 32)] },
      0.7,
      new Date('2026-12-06T10:00:00Z'),
    )
    expect(out).toMatchObject({ learnt: true })
    const written = readHouseholdVerifier(file, JARVIS).record
    expect(written.enrolment).toMatchObject({ at: enrolledAt, clips: 5 })
    expect(written.taught?.at).toBe('2026-12-06T10:00:00.000Z')
    expect(stage.record?.enrolment.at).toBe(enrolledAt)
  })

  it('keeps the windows it saw: the best of the last seconds, with its neighbours', () => {
    let now = 0
    const stage = new HouseholdStage({ phrase: 'hey jarvis', now: () => now })
    // No verifier: it scores nothing, the head's score stands, and it keeps every window.
    expect(stage.gate).toBe(0)
    for (const [i, head] of [0.1, 0.2, 0.9, 0.3, 0.1].entries()) {
      now = i * 80
      expect(stage.score(around(head, i), head)).toBe(head)
    }
    expect(stage.bestRecent()?.head).toBe(0.9)
    expect(stage.bestRecent()?.windows).toHaveLength(3)
    expect(stage.around(0, 400, 2).map((w) => w[0]?.toFixed(1))).toEqual(['0.9', '0.3'])
    now = 20_000
    expect(stage.bestRecent()).toBeUndefined()
  })

  it('cannot be taught without an enrolled verifier, or with nothing of the household to hold against', async () => {
    const none = new HouseholdStage({ phrase: 'hey jarvis' })
    const lesson = { negatives: [nearMiss(1)], positives: [around(1, 2)] }
    expect(await none.teach(lesson, 0.7, new Date())).toMatchObject({
      learnt: false,
      why: expect.stringContaining('enrol first'),
    })
    const { stage, file } = enrolledStage()
    const before = readFileSync(file, 'utf8')
    expect(await stage.teach({ ...lesson, positives: [] }, 0.7, new Date())).toMatchObject({
      learnt: false,
      why: expect.stringContaining('say the wake phrase to it once'),
    })
    expect(readFileSync(file, 'utf8')).toBe(before)
  })

  it('a lesson with the phrase heard in noise refuses the near-miss and still accepts its noisy wakes', async () => {
    const noisy = [51, 52, 53, 54].map(inNoise)
    const lesson = {
      negatives: [41, 42, 43, 44].map(nearMiss),
      positives: [45, 46].map((s) => around(1, s)),
    }
    const unguarded = enrolledStage().stage
    // Enrolment kept the windows of the household's clips heard in noise in the verifier file.
    const { stage: guarded, file } = enrolledStage({ noisy })
    // Enrolled, it accepts the phrase in noise as it does clean.
    for (const x of noisy) expect(guarded.score(x, 0.9)).toBeGreaterThan(0.7)
    const at = new Date('2026-12-05T21:00:00Z')
    expect(await unguarded.teach(lesson, 0.7, at)).toMatchObject({ learnt: true, refused: 4 })
    // Taught from clean wakes alone, it goes deaf in the noisy room (the bench's misses at 10 dB).
    expect(noisy.some((x) => unguarded.score(x, 0.9) < 0.7)).toBe(true)
    expect(await guarded.teach(lesson, 0.7, at)).toMatchObject({
      learnt: true,
      refused: 4,
      guarded: 4,
    })
    for (const x of noisy) expect(guarded.score(x, 0.9)).toBeGreaterThanOrEqual(0.7)
    expect(guarded.score(nearMiss(61), 0.9)).toBeLessThan(0.7)
    // The taught file keeps them: the next lesson is guarded too.
    expect(readHouseholdVerifier(file, JARVIS).record.noisy).toBe(encodeWindows(noisy))
  })

  it('a mark that cannot be told from the phrase in noise is refused, saying why, and changes nothing', async () => {
    // In a noisy room the household's phrase gives the very windows that were marked.
    const noisy = [73, 74].map(nearMiss)
    const { stage, file } = enrolledStage({ noisy })
    const before = readFileSync(file, 'utf8')
    const lesson = { negatives: [73, 74].map(nearMiss), positives: [around(1, 75)] }
    expect(await stage.teach(lesson, 0.7, new Date())).toMatchObject({
      learnt: false,
      why: expect.stringContaining('in a noisy room'),
    })
    expect(readFileSync(file, 'utf8')).toBe(before)
    for (const x of noisy) expect(stage.score(x, 0.9)).toBeGreaterThanOrEqual(0.7)
  })

  it('the sliced fit is the same fit', async () => {
    const x = [1, 2, 3, 4].map((s) => around(s % 2 ? 1 : -1, s))
    const y = [1, 0, 1, 0]
    const a = trainLogistic(x, y)
    const b = await trainLogisticAsync(x, y, {}, 0)
    expect(b.bias).toBe(a.bias)
    expect(predict(b, x[0] as Float32Array)).toBe(predict(a, x[0] as Float32Array))
  })
})
