import type { WakeListener } from '../../ports/wake-word.js'
import { PHASES } from './features.js'
import type { VerifierStage } from './verifier.js'

/** Upstream forces each model's first 5 scores to 0 while its buffers fill with real audio. */
const WARMUP_CHUNKS = 5
/**
 * A coarse score at this share of a phrase's threshold or above makes scoring exact (0.01 at
 * 0.5). At a fifth, coarse scoring lost 4 of 43 wakes on the bench's clean clips; at a fiftieth
 * none (bench/RESULTS.md, "coarse scoring").
 */
const RISING_SHARE = 0.02
/** The level of a detection is the RMS over the head's window of chunks. */
const LEVEL_CHUNKS = 16
const FULL_SCALE_SQUARED = 32768 * 32768

interface WakeTriggerOptions {
  /** Each phrase and the threshold it was configured with, in the order of the scores. */
  readonly heads: readonly { readonly phrase: string; readonly threshold: number }[]
  readonly consecutive: number
  readonly refractoryMs: number
  readonly onWake: WakeListener
}

/**
 * When a chunk's scores are a wake: each phrase's threshold now (the sensitivity moves it), the
 * warm-up after a reset, `consecutive` chunks in a row at or above it, the refractory time after a
 * wake, and the level the wake was heard at. No I/O and no models: the detector scores, this decides.
 *
 * Scores come in phases: 0 at the chunks' ends, and near a threshold only, the detector's further
 * phases p × 20 ms before them (the service scores one, 40 ms). Each phase counts its own run of
 * chunks, 80 ms apart, as a detector whose chunks fell there would: a wake is what any of them
 * would fire, so a phrase whose peak falls between two chunks of phase 0 still needs `consecutive`
 * chunks of another phase. The refractory time is shared, and a wake clears every run. The
 * detector judges a chunk's phase-0 scores before the older windows made with them (the same
 * moment): where both would fire there, the wake is phase 0's, as without further phases.
 */
export class WakeTrigger {
  readonly #o: WakeTriggerOptions
  /** Per phase, per head: chunks in a row at or above the threshold. */
  readonly #above: number[][]
  /** Each head's threshold now: the configured one until the sensitivity changes it. */
  #thresholds: readonly number[]
  #quietUntil = Number.NEGATIVE_INFINITY
  #sinceReset = 0
  readonly #energy = new Float64Array(LEVEL_CHUNKS)
  #energyAt = 0

  constructor(options: WakeTriggerOptions) {
    this.#o = options
    this.#above = Array.from({ length: PHASES }, () => options.heads.map(() => 0))
    this.#thresholds = options.heads.map((h) => h.threshold)
  }

  setThresholds(thresholds: readonly number[]): void {
    checkThresholds(thresholds, this.#o.heads.length)
    this.#thresholds = [...thresholds]
  }

  /** Whether any head's score is within reach of its threshold: where coarse scoring stops. */
  rising(scores: readonly number[]): boolean {
    return this.near(scores, RISING_SHARE)
  }

  /** Whether any head's score is at `share` of its threshold or above. */
  near(scores: readonly number[], share: number): boolean {
    return scores.some((s, i) => s >= share * (this.#thresholds[i] ?? 1))
  }

  /**
   * A verifier's gate comes down with its phrase's threshold, in proportion (0.3 enrolled at 0.5 is
   * 0.18 at 0.3): at a high sensitivity the verifier can lift weaker head scores. Left at 0.3 it
   * would sit at that threshold, where the verifier can only turn wakes away: more false wakes than
   * normal and no better hearing. Above the configured threshold it stays: the verifier must clear
   * the higher threshold itself, and a higher gate only cost wakes (bench/RESULTS.md, "the
   * verifier's gate at each sensitivity").
   */
  gate(i: number, verifier: VerifierStage): number {
    const configured = this.#o.heads[i]?.threshold ?? 0
    const now = this.#thresholds[i] ?? configured
    return now < configured ? (verifier.gate * now) / configured : verifier.gate
  }

  /** A chunk's raw scores as they count: zero while the models warm up after a reset. */
  warm(raw: readonly number[]): number[] {
    const warm = this.#sinceReset++ >= WARMUP_CHUNKS
    return raw.map((s) => (warm ? s : 0))
  }

  /**
   * A second-phase window's raw scores as they count: the window ending 40 ms before the chunk
   * `back` chunks before the one last warmed (`warm`) counts once the chunk before it did.
   */
  warmOffset(raw: readonly number[], back: number): number[] {
    const warm = this.#sinceReset - back - 2 >= WARMUP_CHUNKS
    return raw.map((s) => (warm ? s : 0))
  }

  /** A further phase stops (or starts) being scored: its run of chunks starts over. */
  breakOffsetRun(phase: number): void {
    this.#above[phase]?.fill(0)
  }

  /**
   * Fires the wake that `phase`'s window ending at `endAt` completes, if any (the highest-scoring
   * phrase).
   */
  judge(scores: readonly number[], endAt: number, phase = 0): void {
    const above = this.#above[phase] ?? []
    let best = -1
    this.#o.heads.forEach((h, i) => {
      const s = scores[i] ?? 0
      above[i] = s >= (this.#thresholds[i] ?? h.threshold) ? (above[i] ?? 0) + 1 : 0
      if ((above[i] ?? 0) >= this.#o.consecutive && (best < 0 || s > (scores[best] ?? 0))) {
        best = i
      }
    })
    if (best < 0 || endAt < this.#quietUntil) return
    this.#quietUntil = endAt + this.#o.refractoryMs
    for (const a of this.#above) a.fill(0)
    const detection = {
      phrase: this.#o.heads[best]?.phrase ?? '',
      score: scores[best] ?? 0,
      heardAtMs: endAt,
      levelDb: this.#levelDb(),
    }
    // The chain's listener records it (chain.ts); the detector calls the service's, guarded.
    this.#o.onWake(detection)
  }

  /** No wake could stand here: it counts as scored below every threshold. */
  quiet(): void {
    this.#sinceReset++
    for (const a of this.#above) a.fill(0)
  }

  /** The audio starts over: warm-up, runs above the thresholds and the level with it. */
  reset(): void {
    this.#sinceReset = 0
    for (const a of this.#above) a.fill(0)
    this.#energy.fill(0)
    this.#energyAt = 0
  }

  /** A chunk about to be scored, for the level of a wake it may complete. */
  noteEnergy(chunk: Int16Array): void {
    let sum = 0
    for (let i = 0; i < chunk.length; i++) {
      const v = chunk[i] ?? 0
      sum += v * v
    }
    this.#energy[this.#energyAt] = sum / chunk.length
    this.#energyAt = (this.#energyAt + 1) % LEVEL_CHUNKS
  }

  #levelDb(): number {
    let sum = 0
    for (const e of this.#energy) sum += e
    const mean = sum / LEVEL_CHUNKS / FULL_SCALE_SQUARED
    return mean > 0 ? Math.max(-120, 10 * Math.log10(mean)) : -120
  }
}

/** Throws unless `thresholds` are `heads` numbers in (0, 1), one per phrase. */
export function checkThresholds(thresholds: readonly number[], heads: number): void {
  if (thresholds.length !== heads || !thresholds.every((t) => t > 0 && t < 1)) {
    throw new RangeError(
      `wake thresholds: expected ${heads} numbers in (0, 1), got [${thresholds.join(', ')}]`,
    )
  }
}
