import { jittered } from './augment.js'
import { type LogisticModel, predict, trainLogisticAsync } from './logistic.js'

/** What a household's marks teach: its windows, never audio (docs/wake-word.md, "Teaching it"). */
export interface Lesson {
  /** Windows of wakes marked "that wasn't me". */
  readonly negatives: readonly Float32Array[]
  /** Windows of the household's confirmed wakes and "it missed me" notes. */
  readonly positives: readonly Float32Array[]
  /** Windows of the household's phrase heard in noise, when some are known (the guard's own). */
  readonly noisy?: readonly Float32Array[]
}

/** How a lesson guards what the household's phrase sounds like in a noisy room. */
export interface NoiseGuard {
  /**
   * Noisy copies made of each positive window (features only): Gaussian noise of this share of
   * each feature's spread over the positives; 0 makes none.
   */
  readonly jitter: number
  readonly copies: number
  /**
   * Logit units a confirmed wake must keep above the threshold, where it had them: a wake heard
   * clean at the edge is heard in noise under it.
   */
  readonly margin: number
  /** The share of the loss the held windows carry (the marked ones the rest); 0.5 unset. */
  readonly heldShare?: number
}

export const NO_GUARD: NoiseGuard = { jitter: 0, copies: 0, margin: 0 }
/** The guard a stage teaches with (chosen by measurement: bench/RESULTS.md, "a guard for noise"). */
export const NOISE_GUARD: NoiseGuard = { jitter: 0.5, copies: 4, margin: 1 }

/**
 * How strongly the taught verifier is held to the one it has (L2 on raw features), tried from the
 * strongest: the least change that refuses what was marked (bench/RESULTS.md, "ten marks").
 */
const ANCHORS = [3, 1, 0.3, 0.1, 0.03]
const ITERATIONS = 300
const JITTER_SEED = 46

export type Fitted =
  | { readonly model: LogisticModel; readonly guarded: number }
  | { readonly why: string }

const logit = (p: number) => Math.log(p / (1 - p))

/**
 * The anchored fit of a lesson (docs/wake-word.md, "Teaching it"). The marked windows are fitted
 * towards 0; the household's wakes, and the guard's noisy windows, towards the score `current`
 * gives them now (soft labels: held where they are, never pushed up — pushed towards 1, they
 * widened what it accepts: bench/RESULTS.md, "ten marks"). From the strongest anchor down, the
 * first fit that refuses every marked window and still accepts every held one the verifier
 * accepts now is kept; if none refuses them all, the weakest that keeps them; if even the
 * strongest loses one, nothing is learnt and the answer says why.
 */
export async function fitLesson(
  current: LogisticModel,
  lesson: Lesson,
  threshold: number,
  guard: NoiseGuard,
): Promise<Fitted> {
  const score = (x: Float32Array) => predict(current, x)
  const clean = lesson.positives.filter((x) => score(x) >= threshold)
  const noisy = [
    ...(lesson.noisy ?? []),
    ...(guard.jitter > 0
      ? jittered(lesson.positives, guard.jitter, guard.copies, JITTER_SEED)
      : []),
  ].filter((x) => score(x) >= threshold)
  const edge = logit(threshold)
  const floorOf = (x: Float32Array) => Math.min(logit(score(x)), edge + guard.margin)
  const floors = clean.map(floorOf)
  const keepsClean = (m: LogisticModel) =>
    clean.every((x, i) => logit(predict(m, x)) >= (floors[i] ?? edge) - 1e-9)
  const keepsNoisy = (m: LogisticModel) => noisy.every((x) => predict(m, x) >= threshold)
  const refuses = (m: LogisticModel) => lesson.negatives.every((x) => predict(m, x) < threshold)

  const held = [...lesson.positives, ...noisy]
  const samples = [...held, ...lesson.negatives]
  const labels = [...held.map(score), ...lesson.negatives.map(() => 0)]
  const weights = [
    ...held.map(() => (guard.heldShare ?? 0.5) / held.length),
    ...lesson.negatives.map(() => (1 - (guard.heldShare ?? 0.5)) / lesson.negatives.length),
  ]
  let model: LogisticModel | undefined
  for (const l2 of ANCHORS) {
    const fit = await trainLogisticAsync(samples, labels, {
      anchor: current,
      start: current,
      l2,
      sampleWeights: weights,
      maxIterations: ITERATIONS,
    })
    if (!keepsClean(fit) || !keepsNoisy(fit)) break
    model = fit
    if (refuses(fit)) break
  }
  if (model) return { model, guarded: noisy.length }
  return {
    why:
      noisy.length > 0
        ? 'what was marked is too like your own wakes, as the speaker hears them clean and in a noisy room, to tell apart: nothing was changed, so it still hears you over noise'
        : 'what was marked is too like your own wakes to tell apart: nothing was changed',
  }
}
