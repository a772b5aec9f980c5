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

/**
 * The share of the loss the held windows (the household's wakes, clean and in noise) carry
 * together, the marked ones the rest: with the phrase in noise held, 0.8 let more marks be learnt
 * than 0.5 for the same misses (bench/RESULTS.md, "a guard for noise").
 */
export const HELD_SHARE = 0.8

/**
 * How strongly the taught verifier is held to the one it has (L2 on raw features), tried from the
 * strongest: the least change that refuses what was marked (bench/RESULTS.md, "ten marks").
 */
const ANCHORS = [3, 1, 0.3, 0.1, 0.03]
const ITERATIONS = 300

type Fitted = { readonly model: LogisticModel; readonly guarded: number } | { readonly why: string }

/**
 * The anchored fit of a lesson (docs/wake-word.md, "Teaching it"). The marked windows are fitted
 * towards 0; the household's wakes, and the guard's noisy windows, towards the score `current`
 * gives them now (soft labels: held where they are, never pushed up — pushed towards 1, they
 * widened what it accepts: bench/RESULTS.md, "ten marks"). From the strongest anchor down, the
 * first fit that refuses every marked window and still accepts every held one the verifier
 * accepts now is kept; if none refuses them all, the weakest that keeps them; if even the
 * strongest loses one, or the kept fit refuses no marked window, nothing is learnt and the answer
 * says why.
 */
export async function fitLesson(
  current: LogisticModel,
  lesson: Lesson,
  threshold: number,
  heldShare = HELD_SHARE,
): Promise<Fitted> {
  const score = (x: Float32Array) => predict(current, x)
  const clean = lesson.positives.filter((x) => score(x) >= threshold)
  const noisy = (lesson.noisy ?? []).filter((x) => score(x) >= threshold)
  const keeps = (m: LogisticModel) =>
    clean.every((x) => predict(m, x) >= threshold) && noisy.every((x) => predict(m, x) >= threshold)
  const refuses = (m: LogisticModel) => lesson.negatives.every((x) => predict(m, x) < threshold)

  const held = [...lesson.positives, ...noisy]
  const samples = [...held, ...lesson.negatives]
  const labels = [...held.map(score), ...lesson.negatives.map(() => 0)]
  const weights = [
    ...held.map(() => heldShare / held.length),
    ...lesson.negatives.map(() => (1 - heldShare) / lesson.negatives.length),
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
    if (!keeps(fit)) break
    model = fit
    if (refuses(fit)) break
  }
  // A fit that refuses none of the marked windows teaches nothing: said so, not written.
  if (model && lesson.negatives.some((x) => predict(model, x) < threshold)) {
    return { model, guarded: noisy.length }
  }
  return {
    why:
      noisy.length > 0
        ? 'what was marked is too like your own wakes, as the speaker hears them clean and in a noisy room, to tell apart: nothing was changed, so it still hears you over noise'
        : 'what was marked is too like your own wakes to tell apart: nothing was changed',
  }
}
