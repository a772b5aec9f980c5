/**
 * Binary logistic regression with an L2 penalty, for the household's wake verifier: a few hundred
 * samples of ~1500 features, trained on the device in a second or two. Features are standardised
 * (each to mean 0, deviation 1, over the training set) so one penalty suits them all, and the two
 * classes weigh the same however many of each there are (a minute of room audio gives ten times
 * the windows a few phrases do). Solved by accelerated gradient descent with the step from the
 * loss's curvature bound; the problem is strongly convex, so it converges without tuning.
 */
export interface LogisticModel {
  /** On raw (unstandardised) features: the standardisation is folded in. */
  readonly weights: Float64Array
  readonly bias: number
}

export interface LogisticOptions {
  /** The L2 penalty on the standardised weights, against the class-balanced mean loss. */
  readonly l2?: number
  readonly maxIterations?: number
  /** Start from this model (its own standardisation undone): leave-one-out refits start warm. */
  readonly start?: LogisticModel
  /**
   * Each sample's share of the loss (they are normalised to sum to 1); unset, the two classes
   * weigh half each.
   */
  readonly sampleWeights?: readonly number[]
  /**
   * Penalise the distance to this model, not to zero (the household teaching its verifier: a few
   * marked windows move the enrolled model a little, not start it again). Its features are the
   * raw ones: the samples are not standardised, since a handful of them would blow up every
   * feature they barely vary on.
   */
  readonly anchor?: LogisticModel
}

interface Standardised {
  readonly mean: Float64Array
  readonly scale: Float64Array
}

/** 1.0 on the mean balanced loss: strong, as upstream's C = 0.001 is for its sample counts. */
const DEFAULT_L2 = 1
const DEFAULT_MAX_ITERATIONS = 400
/** Features that barely vary are not blown up into noise. */
const MIN_SCALE = 1e-3

/** The probability (0–1) that `x` is of class 1. */
export function predict(model: LogisticModel, x: ArrayLike<number>): number {
  let z = model.bias
  const w = model.weights
  for (let j = 0; j < w.length; j++) z += (w[j] ?? 0) * (x[j] ?? 0)
  return sigmoid(z)
}

/** Fits `labels` (0 or 1; anchored, any probability) from `samples` (all of one length). Throws when a class is empty. */
export function trainLogistic(
  samples: readonly ArrayLike<number>[],
  labels: readonly number[],
  options: LogisticOptions = {},
): LogisticModel {
  const steps = fitSteps(samples, labels, options)
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
  }
}

/**
 * The same fit, handing the event loop back every `sliceMs` of work (an iteration is ~1 ms for a
 * hundred windows): a speaker re-training while it listens keeps answering its button.
 */
export async function trainLogisticAsync(
  samples: readonly ArrayLike<number>[],
  labels: readonly number[],
  options: LogisticOptions = {},
  sliceMs = 5,
): Promise<LogisticModel> {
  const steps = fitSteps(samples, labels, options)
  let from = performance.now()
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
    if (performance.now() - from >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve))
      from = performance.now()
    }
  }
}

function* fitSteps(
  samples: readonly ArrayLike<number>[],
  labels: readonly number[],
  options: LogisticOptions,
): Generator<void, LogisticModel> {
  const n = samples.length
  const d = samples[0]?.length ?? 0
  const positives = labels.filter((y) => y === 1).length
  // Anchored, one class is a lesson too: the anchor is what the other class taught.
  const oneClass = options.anchor !== undefined && n > 0
  if (n !== labels.length || d === 0 || (!oneClass && (positives === 0 || positives === n))) {
    throw new Error('logistic regression needs samples of both classes, one label each')
  }
  const anchor = options.anchor
  const { mean, scale } = anchor ? unstandardised(d) : standardise(samples, d)
  const x = new Float64Array(n * d)
  samples.forEach((s, i) => {
    for (let j = 0; j < d; j++) x[i * d + j] = ((s[j] ?? 0) - (mean[j] ?? 0)) / (scale[j] ?? 1)
  })
  // Each class carries half of the loss, unless the caller weighs the samples.
  const given = options.sampleWeights
  const total = given ? given.reduce((a, b) => a + b, 0) : 1
  const alpha = given
    ? given.map((v) => v / total)
    : labels.map((y) => (y === 1 ? 0.5 / Math.max(1, positives) : 0.5 / Math.max(1, n - positives)))
  const l2 = options.l2 ?? DEFAULT_L2
  const step = 1 / (curvatureBound(x, alpha, n, d) + l2)

  const w = new Float64Array(d)
  let b = 0
  // The anchor in these (raw) units; zero without one.
  const a = anchor ? Float64Array.from(anchor.weights) : new Float64Array(d)
  const anchorBias = anchor?.bias ?? 0
  if (options.start) {
    // Into standardised units: w_std = w_raw · scale, b_std = b_raw + Σ w_raw · mean.
    b = options.start.bias
    for (let j = 0; j < d; j++) {
      const wr = options.start.weights[j] ?? 0
      w[j] = wr * (scale[j] ?? 1)
      b += wr * (mean[j] ?? 0)
    }
  }
  // Nesterov's momentum on (w, b): `v` the look-ahead point.
  const vw = Float64Array.from(w)
  let vb = b
  const gw = new Float64Array(d)
  const prevW = new Float64Array(d)
  const z = new Float64Array(n)
  const iterations = options.maxIterations ?? DEFAULT_MAX_ITERATIONS
  for (let t = 1; t <= iterations; t++) {
    // Gradient at the look-ahead point.
    for (let i = 0; i < n; i++) {
      let s = vb
      const row = i * d
      for (let j = 0; j < d; j++) s += (vw[j] ?? 0) * (x[row + j] ?? 0)
      z[i] = s
    }
    gw.fill(0)
    let gb = 0
    for (let i = 0; i < n; i++) {
      const r = (alpha[i] ?? 0) * (sigmoid(z[i] ?? 0) - (labels[i] ?? 0))
      gb += r
      const row = i * d
      for (let j = 0; j < d; j++) gw[j] = (gw[j] ?? 0) + r * (x[row + j] ?? 0)
    }
    let norm = gb * gb
    prevW.set(w)
    const prevB = b
    for (let j = 0; j < d; j++) {
      const g = (gw[j] ?? 0) + l2 * ((vw[j] ?? 0) - (a[j] ?? 0))
      norm += g * g
      w[j] = (vw[j] ?? 0) - step * g
    }
    // Anchored, the bias is held to the anchor's too: a shift of every score is not a lesson.
    b = vb - step * (anchor ? gb + l2 * (vb - anchorBias) : gb)
    const momentum = (t - 1) / (t + 2)
    for (let j = 0; j < d; j++) vw[j] = (w[j] ?? 0) + momentum * ((w[j] ?? 0) - (prevW[j] ?? 0))
    vb = b + momentum * (b - prevB)
    if (Math.sqrt(norm) < 1e-6) break
    yield
  }
  // Fold the standardisation back in, so scoring needs no per-feature pass of its own.
  const weights = new Float64Array(d)
  let bias = b
  for (let j = 0; j < d; j++) {
    weights[j] = (w[j] ?? 0) / (scale[j] ?? 1)
    bias -= (weights[j] ?? 0) * (mean[j] ?? 0)
  }
  return { weights, bias }
}

function unstandardised(d: number): Standardised {
  return { mean: new Float64Array(d), scale: new Float64Array(d).fill(1) }
}

function standardise(samples: readonly ArrayLike<number>[], d: number): Standardised {
  const n = samples.length
  const mean = new Float64Array(d)
  const scale = new Float64Array(d)
  for (const s of samples) for (let j = 0; j < d; j++) mean[j] = (mean[j] ?? 0) + (s[j] ?? 0) / n
  for (const s of samples) {
    for (let j = 0; j < d; j++) {
      const v = (s[j] ?? 0) - (mean[j] ?? 0)
      scale[j] = (scale[j] ?? 0) + (v * v) / n
    }
  }
  for (let j = 0; j < d; j++) scale[j] = Math.max(MIN_SCALE, Math.sqrt(scale[j] ?? 0))
  return { mean, scale }
}

/**
 * An upper bound of the loss's curvature: a quarter of the largest eigenvalue of the weighted
 * Gram matrix (bias column included), by power iteration, with a margin for its error.
 */
function curvatureBound(x: Float64Array, alpha: readonly number[], n: number, d: number): number {
  let v = new Float64Array(d + 1).fill(1 / Math.sqrt(d + 1))
  let lambda = 0
  const xv = new Float64Array(n)
  for (let k = 0; k < 30; k++) {
    for (let i = 0; i < n; i++) {
      let s = v[d] ?? 0
      for (let j = 0; j < d; j++) s += (x[i * d + j] ?? 0) * (v[j] ?? 0)
      xv[i] = (alpha[i] ?? 0) * s
    }
    const next = new Float64Array(d + 1)
    for (let i = 0; i < n; i++) {
      const r = xv[i] ?? 0
      for (let j = 0; j < d; j++) next[j] = (next[j] ?? 0) + r * (x[i * d + j] ?? 0)
      next[d] = (next[d] ?? 0) + r
    }
    let norm = 0
    for (const e of next) norm += e * e
    norm = Math.sqrt(norm)
    if (norm === 0) break
    lambda = norm
    for (let j = 0; j <= d; j++) next[j] = (next[j] ?? 0) / norm
    v = next
  }
  return 0.25 * lambda * 1.1
}

function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z))
}
