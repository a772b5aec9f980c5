import type { WakeDetection } from '../../ports/wake-word.js'
import type { TakenChunk } from './chunk-ring.js'
import type { CompanionModel } from './companion.js'
import type { FeaturePipeline } from './features.js'
import { OFFSET_KEEP } from './features.js'
import { Heads } from './heads.js'
import type { ModelSession } from './model-session.js'
import { OffsetPhase } from './offset-phase.js'
import type { VerifierStage } from './verifier.js'
import { WakeTrigger } from './wake-trigger.js'

/**
 * What a chunk's scoring said, in the order it happened: the detector (detector.ts) replays them
 * on the event loop. `window`: a head's window that reached its verifier's gate, for the
 * household's stage on the event loop to keep (a chain on the runtime's thread scores it there).
 */
export type ChainEvent =
  | {
      readonly kind: 'scores'
      readonly scores: number[]
      readonly endAt: number
      readonly arrivedAt: number
    }
  | { readonly kind: 'offset'; readonly scores: number[]; readonly at: number }
  | { readonly kind: 'wake'; readonly detection: WakeDetection }
  | {
      readonly kind: 'window'
      readonly head: number
      readonly window: Float32Array
      readonly score: number
    }

/** One request: chunks to score, in order, after a reset if one was asked for. */
export interface ChainAsk {
  readonly reset: boolean
  /** Each phrase's threshold now (the sensitivity moves them). */
  readonly thresholds: readonly number[]
  readonly chunks: readonly TakenChunk[]
  /**
   * The detector is behind (a board that cannot keep up): while every score is far below its
   * threshold, coarse scoring may take the far hop (FAR_SHARE) rather than fall further behind.
   */
  readonly behind?: boolean | undefined
}

export interface ChainResult {
  readonly events: ChainEvent[]
  readonly quiet: number
  readonly coarse: number
  readonly offsetScores: number
  /** Scoring is exact from the next chunk (a score is near a threshold): send chunks one by one. */
  readonly exact: boolean
}

/**
 * The scoring chain behind the detector: in process (`ScoringChain` itself) or on the runtime's
 * thread (model-thread.ts), where a request is one hand-off whatever it runs.
 */
export interface ChunkChain {
  score(ask: ChainAsk): Promise<ChainResult>
  close(): Promise<void>
}

/** One wake phrase as the chain scores it. */
export interface ChainHead {
  readonly phrase: string
  readonly model: ModelSession
  readonly threshold: number
  readonly verifier?: VerifierStage | undefined
  readonly companion?: CompanionModel | undefined
}

export interface ScoringChainOptions {
  readonly features: FeaturePipeline
  readonly heads: readonly ChainHead[]
  readonly consecutive: number
  readonly refractoryMs: number
  readonly coarseHop?: number | undefined
  readonly offsetPhase?: number | false | undefined
  readonly offsetPhases?: readonly number[] | undefined
  /** Where events go as they happen (a verifier of the caller's may add its own); drained by `score`. */
  readonly events?: ChainEvent[] | undefined
}

/**
 * Exact chunks in a row with every score far below its threshold (`WakeTrigger.rising`) before
 * scoring is coarse again. A later rise is caught as the first one was (its window's missing
 * embeddings made late), so the tail need not cover a head's window: 4 scored the bench's
 * non-wake speech 14 % coarser than 16 with the same wakes (bench/RESULTS.md, "coarse scoring").
 */
const DENSE_TAIL_CHUNKS = 4
/**
 * The second phase is scored from an exact score at this share of its threshold (0.05 at 0.5):
 * see bench/RESULTS.md, "the second phase", for the shares tried.
 */
const OFFSET_SHARE = 0.1
/** Chunks the second phase stays on after its last score at OFFSET_SHARE (as DENSE_TAIL_CHUNKS). */
const OFFSET_TAIL = DENSE_TAIL_CHUNKS
/**
 * Behind, while the last coarse score had every head under this share of its threshold (1e-4 at
 * 0.5: 92 % of a television's coarse scores), one embedding is made every 2 × `coarseHop` chunks
 * — the far hop; a coarse score at it or above makes every chunk exact at once, the skipped ones
 * included (back to the plain hop first lost a wake: that window holds an embedding every 4
 * chunks, and read 4e-3 where the exact score was 0.89). Only behind: on a board that keeps up it
 * saved ~2 ms/s and moved scores near a threshold (bench/RESULTS.md, "a talking room inside
 * 2.5 %"); on one that cannot, the choice is a rougher score far below or a chunk dropped unheard.
 */
const FAR_SHARE = 0.0002
/** The pipeline's phase whose windows end half a chunk (40 ms) before the chunks' ends. */
const HALF_CHUNK_PHASE = 2

/**
 * Mel → embedding → every head → the wake rule, for a run of chunks, with all their state: the
 * feature pipeline's frames and embeddings, coarse or exact scoring, the further phases and the
 * trigger's runs of chunks. It runs where the models run, so a request costs one hand-off to the
 * runtime's thread however many model runs it takes (docs/wake-word.md, "One hand-off per chunk").
 * A chunk with no voice near gets its mel frames only; while every score is far below its
 * threshold one embedding is made every `coarseHop` chunks and the others stood in for; as a
 * score rises every chunk is scored exactly, the skipped ones included.
 */
export class ScoringChain implements ChunkChain {
  readonly #features: FeaturePipeline
  readonly #heads: Heads
  readonly #trigger: WakeTrigger
  readonly #offsets: OffsetPhase[]
  readonly #events: ChainEvent[]
  /** At most `coarseHop`; 1 scores every chunk exactly. */
  readonly #hop: number
  /** Exact chunks still to score before coarse scoring may resume; Infinity when never coarse. */
  #denseLeft: number
  /** The last coarse score had every head under FAR_SHARE of its threshold. */
  #farBelow = false
  /** This request is behind (`ChainAsk.behind`): the far hop may be taken. */
  #farAllowed = false
  /**
   * Chunks heard since the last coarse score made at the far hop: while under the longest head's
   * window, that window still holds a gap of 4 chunks, and a score at FAR_SHARE is taken as a rise.
   */
  #sinceFar = Number.POSITIVE_INFINITY
  /** Chunks with a voice near not scored yet: end time, arrival time, per chunk. */
  readonly #pending: number[] = []
  #quiet = 0
  #coarse = 0

  constructor(o: ScoringChainOptions) {
    const events = o.events ?? []
    this.#events = events
    this.#features = o.features
    this.#trigger = new WakeTrigger({
      heads: o.heads,
      consecutive: o.consecutive,
      refractoryMs: o.refractoryMs,
      onWake: (detection) => events.push({ kind: 'wake', detection }),
    })
    this.#heads = new Heads(o.heads, (i, v) => this.#trigger.gate(i, v))
    this.#hop = Math.max(1, Math.floor(o.coarseHop ?? 1))
    this.#denseLeft = this.#hop > 1 ? 0 : Number.POSITIVE_INFINITY
    this.#offsets = offsetPhases(o, this.#trigger, this.#heads, this.#hop, events)
  }

  async score(ask: ChainAsk): Promise<ChainResult> {
    if (ask.reset) this.#reset()
    this.#trigger.setThresholds(ask.thresholds)
    this.#farAllowed = ask.behind === true
    const offsetsBefore = this.#offsetScores()
    const [quiet, coarse] = [this.#quiet, this.#coarse]
    let events: ChainEvent[] = []
    try {
      // The request's mel frames in one run where they are the same (features.ts, `prepare`).
      await this.#features.prepare(ask.chunks.map((c) => c.chunk))
      // Each chunk's energy as it is scored: a wake's level is then the same however many
      // chunks its request carried (the detector sends 4 at a time while coarse).
      for (const c of ask.chunks) {
        this.#trigger.noteEnergy(c.chunk)
        await this.#scoreChunk(c)
      }
    } finally {
      // A failed request's events are dropped with it; the next one starts clean.
      events = this.#events.splice(0)
    }
    return {
      events,
      quiet: this.#quiet - quiet,
      coarse: this.#coarse - coarse,
      offsetScores: this.#offsetScores() - offsetsBefore,
      exact: this.#denseLeft > 0,
    }
  }

  async close(): Promise<void> {}

  #offsetScores(): number {
    return this.#offsets.reduce((n, o) => n + o.scores, 0)
  }

  /** One chunk: its mel frames, then as the room and the scores say (quiet, coarse, exact). */
  async #scoreChunk(c: TakenChunk): Promise<void> {
    const features = this.#features
    await features.step(c.chunk)
    if (!c.heard) {
      this.#flushPending()
      this.#quietChunk()
      return
    }
    this.#pending.push(c.endAt, c.arrivedAt)
    this.#sinceFar++
    if (this.#denseLeft === 0) {
      // Coarse: one embedding every `coarseHop` chunks (twice that at the far hop), the window's
      // others stood in for.
      const far = this.#farBelow && this.#farAllowed
      if (this.#pending.length < 2 * (far ? 2 * this.#hop : this.#hop)) return
      await features.embed(1)
      const coarse = await this.#heads.run(features.approximate(this.#heads.longest), false)
      this.#coarse++
      if (far) this.#sinceFar = 0
      this.#farBelow = !this.#trigger.near(coarse, FAR_SHARE)
      // A window with a far hop's gap in it: a score at FAR_SHARE is a rise (FAR_SHARE's note).
      const sparse = this.#sinceFar < this.#heads.longest
      if (!this.#trigger.rising(coarse) && !(sparse && !this.#farBelow)) {
        // Far below every threshold: the chunks since the last coarse score get this one, and
        // the second phase is off.
        for (const o of this.#offsets) o.off()
        for (let p = 0; p < this.#pending.length; p += 2) {
          this.#score(coarse, this.#pending[p] ?? 0, this.#pending[p + 1] ?? 0)
        }
        this.#pending.length = 0
        return
      }
      // A score is rising: every chunk from here is scored exactly, those since the last
      // coarse score included (their embeddings made late from the kept mel frames).
      this.#denseLeft = DENSE_TAIL_CHUNKS
      this.#farBelow = false
    }
    const behind = this.#pending.length / 2
    const longest = this.#heads.longest
    await features.embed(longest + behind - 1)
    for (let b = behind - 1; b >= 0; b--) {
      const scores = await this.#heads.run(features.latest(longest, b), true)
      const p = 2 * (behind - 1 - b)
      const endAt = this.#pending[p] ?? 0
      this.#score(scores, endAt, this.#pending[p + 1] ?? 0)
      // Then the further phases' windows 20–60 ms earlier, made at the same moment: where phase 0
      // and another complete a wake at this chunk, it is phase 0's, as without further phases.
      let offsetRising = false
      for (const o of this.#offsets) {
        if (await o.score(scores, b, endAt)) offsetRising = true
      }
      if (this.#hop > 1) {
        const rising = offsetRising || this.#trigger.rising(scores)
        this.#denseLeft = rising ? DENSE_TAIL_CHUNKS : this.#denseLeft - 1
      }
    }
    this.#pending.length = 0
  }

  /** Chunks waiting for a coarse score when the voice went: they count as below every threshold. */
  #flushPending(): void {
    for (let p = 0; p < this.#pending.length; p += 2) this.#quietChunk()
    this.#pending.length = 0
  }

  #score(raw: number[], endAt: number, arrivedAt: number): void {
    const scores = this.#trigger.warm(raw)
    this.#events.push({ kind: 'scores', scores, endAt, arrivedAt })
    this.#trigger.judge(scores, endAt)
  }

  /** No wake could stand here: it counts as scored below every threshold, at no embedding's cost. */
  #quietChunk(): void {
    // A voice coming back is scored at the plain hop until a coarse score says it is far.
    this.#farBelow = false
    this.#sinceFar = Number.POSITIVE_INFINITY
    for (const o of this.#offsets) o.off()
    this.#quiet++
    this.#trigger.quiet()
  }

  #reset(): void {
    this.#features.reset()
    this.#pending.length = 0
    if (this.#hop > 1) this.#denseLeft = 0
    this.#farBelow = false
    this.#sinceFar = Number.POSITIVE_INFINITY
    for (const o of this.#offsets) o.off()
    this.#trigger.reset()
  }
}

/**
 * The further phases scored near a threshold: see `offsetPhase` (detector.ts). A head whose window
 * they cannot hold (over ~46 embeddings: OFFSET_KEEP) goes without them.
 */
function offsetPhases(
  o: ScoringChainOptions,
  trigger: WakeTrigger,
  heads: Heads,
  hop: number,
  events: ChainEvent[],
): OffsetPhase[] {
  const share = o.offsetPhase ?? (hop > 1 ? OFFSET_SHARE : false)
  if (share === false || heads.longest + hop + o.consecutive - 2 > OFFSET_KEEP) return []
  return (o.offsetPhases ?? [HALF_CHUNK_PHASE]).map(
    (phase) =>
      new OffsetPhase({
        phase,
        share,
        tail: OFFSET_TAIL,
        features: o.features,
        trigger,
        consecutive: o.consecutive,
        heads,
        onScores: (scores, at) => events.push({ kind: 'offset', scores: [...scores], at }),
      }),
  )
}
