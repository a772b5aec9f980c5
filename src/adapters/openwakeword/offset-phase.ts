import { CHUNK_SAMPLES, type FeaturePipeline, PHASES, SAMPLE_RATE_HZ } from './features.js'
import type { Heads } from './heads.js'
import type { WakeTrigger } from './wake-trigger.js'

const CHUNK_MS = (CHUNK_SAMPLES / SAMPLE_RATE_HZ) * 1000

interface OffsetPhaseOptions {
  /** Which of the pipeline's phases (1–3: its windows end 20, 40 or 60 ms before the chunks'). */
  readonly phase: number
  /** An exact score of either phase at this share of its threshold or above turns it on. */
  readonly share: number
  /** Chunks it stays on after the last such score. */
  readonly tail: number
  readonly features: FeaturePipeline
  readonly trigger: WakeTrigger
  /** The trigger's run of chunks: how many windows to score when it comes on. */
  readonly consecutive: number
  readonly heads: Heads
  /** Every score, with the capture time its window ends at. */
  readonly onScores?: ((scores: readonly number[], endAt: number) => void) | undefined
}

/**
 * One of the detector's further phases (the service scores one, 40 ms off): near a threshold,
 * windows of embeddings ending `phase` × 20 ms before each chunk's end (`FeaturePipeline`'s
 * phase), scored and judged as a detector whose chunks fell that much later would score them, so
 * a phrase whose peak falls between two chunks still fires. Off while every score is far below:
 * it costs a mel run, an embedding and a head run per chunk it is on, and its window's embeddings
 * when it comes on (those kept from the last time are reused).
 */
export class OffsetPhase {
  readonly #o: OffsetPhaseOptions
  /** Chunks it stays on for; 0: off. */
  #left = 0
  #scores = 0

  constructor(options: OffsetPhaseOptions) {
    this.#o = options
  }

  /** Scores made in this phase. */
  get scores(): number {
    return this.#scores
  }

  /** No window of it is scored at the next chunk unless a score turns it on again. */
  off(): void {
    this.#left = 0
  }

  /**
   * At the chunk `back` chunks before the newest, ending at `endAt`, whose phase-0 scores `a` were
   * just judged: while on, its window ending 40 ms before the
   * chunk; as it comes on, the `consecutive - 1` windows before that too, so its run of chunks is
   * whole from the start. Resolves with whether one of its scores was rising (so scoring stays
   * exact).
   */
  async score(a: readonly number[], back: number, endAt: number): Promise<boolean> {
    const { trigger, features, share } = this.#o
    const near = trigger.near(a, share)
    const on = this.#left > 0
    if (!on && !near) return false
    const phase = this.#o.phase
    if (!on) trigger.breakOffsetRun(phase)
    const first = on ? back : back + this.#o.consecutive - 1
    await features.embed(this.#o.heads.longest + first, phase)
    let nearToo = false
    let rising = false
    for (let b = first; b >= back; b--) {
      // Exact windows: the household's verifier rescores as on phase 0.
      const raw = await this.#o.heads.run(features.latest(this.#o.heads.longest, b, phase), true)
      nearToo ||= trigger.near(raw, share)
      rising ||= trigger.rising(raw)
      const scores = trigger.warmOffset(raw, b - back)
      const at = endAt - (b - back + phase / PHASES) * CHUNK_MS
      this.#scores++
      this.#o.onScores?.(scores, at)
      trigger.judge(scores, at, phase)
    }
    this.#left = near || nearToo ? this.#o.tail : this.#left - 1
    return rising
  }
}
