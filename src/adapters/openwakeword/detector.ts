import { setTimeout as sleep } from 'node:timers/promises'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { WakeListener, WakeWordDetector } from '../../ports/wake-word.js'
import { ChunkRing, type TakenChunk } from './chunk-ring.js'
import { CHUNK_SAMPLES, type FeaturePipeline, OFFSET_KEEP, SAMPLE_RATE_HZ } from './features.js'
import { Heads } from './heads.js'
import { KeepingUp } from './keeping-up.js'
import type { ModelSession } from './model-session.js'
import { OffsetPhase } from './offset-phase.js'
import type { VerifierStage } from './verifier.js'
import { WakeTrigger } from './wake-trigger.js'

/** One wake phrase: its head model and the score at which it counts (until setThresholds). */
export interface WakeHead {
  readonly phrase: string
  readonly model: ModelSession
  readonly threshold: number
  /** The household's verifier: it rescores the chunks the head scores at or above its gate. */
  readonly verifier?: VerifierStage | undefined
}

/** Every chunk's scores, in the order of `phrases`; for doctor, tests and benchmarks. */
export type ScoreListener = (scores: readonly number[], chunkEndAtMs: number) => void

export interface DetectorStats {
  readonly chunksScored: number
  /** Chunks with no voice nearby: mel frames made and kept, embedding and heads left out. */
  readonly chunksQuiet: number
  /** Coarse scores made (one embedding, the window's others stood in for): see `coarseHop`. */
  readonly coarseScores: number
  /** Further-phase scores made (windows 20–60 ms before a chunk's end): see `offsetPhase`. */
  readonly offsetScores: number
  /** Chunks dropped unscored because scoring fell further behind than the backlog allows. */
  readonly chunksDropped: number
  /** From a chunk's last sample arriving to its scores, in ms: the latest and the largest. */
  readonly lastLagMs: number
  readonly maxLagMs: number
  /** False from a dropped chunk until KEEP_UP_MS of audio in a row was scored without a drop. */
  readonly keepingUp: boolean
  /** Times scoring rested after a chunk took more than half a chunk's time (load shed). */
  readonly rests: number
}

export interface OpenWakeWordDetectorOptions {
  readonly onWake: WakeListener
  /** The runtime's name, as doctor and the logs show it. */
  readonly runtime: string
  readonly features: FeaturePipeline
  readonly heads: readonly WakeHead[]
  /** Chunks (80 ms) in a row at or above a phrase's threshold before it fires. */
  readonly consecutive: number
  /** After a wake, no phrase fires again for this long (capture time). */
  readonly refractoryMs: number
  /** Unscored audio kept while scoring catches up; beyond it the oldest chunks are dropped. */
  readonly backlogMs: number
  readonly logger: Logger
  /**
   * While every head is far below its threshold (under a fiftieth of it), one embedding is made
   * every this many chunks and the heads score a window whose missing embeddings are the line
   * between the made ones either side; as a score rises, every chunk is scored exactly again, the
   * skipped ones included. 1 (or unset): every chunk exactly, always (enrolment).
   */
  readonly coarseHop?: number | undefined
  /**
   * Near a threshold, also score a second phase: windows ending 40 ms before each chunk's end, as
   * a detector whose chunks fell half a chunk later would, so a phrase whose peak falls between
   * two chunks still fires (WakeTrigger says how the two phases count). It is scored while an
   * exact score of either phase is at this share of its threshold or above (and OFFSET_TAIL
   * chunks after); false: never. Unset: OFFSET_SHARE when scoring is coarse (the service), never
   * when every chunk is exact (enrolment, whose windows must stay one per chunk).
   */
  readonly offsetPhase?: number | false | undefined
  /**
   * Which further phases to score near a threshold: 1–3, windows ending 20, 40 or 60 ms before
   * each chunk's end. Unset: 2 alone (40 ms, half a chunk).
   */
  readonly offsetPhases?: readonly number[] | undefined
  /** Every further phase's score, with the capture time its window ends at. */
  readonly onOffsetScores?: ScoreListener | undefined
  /** Wall clock (ms) for the scoring lag. */
  readonly now: () => number
  readonly onScores?: ScoreListener | undefined
  /**
   * Told when scoring starts dropping audio (false: this board cannot keep up) and when it has
   * kept up again for KEEP_UP_MS (true); the service shows it on the status, the LED and doctor.
   */
  readonly onKeepingUp?: ((keepingUp: boolean) => void) | undefined
  /** Also closed with the detector (the feature models). */
  readonly owned?: readonly ModelSession[]
}

const CHUNK_MS = (CHUNK_SAMPLES / SAMPLE_RATE_HZ) * 1000
/**
 * A chunk whose scoring took longer than this (wall time) means the board, or the CPU share the
 * process gets, cannot score in real time: scoring then rests as long as it worked before the
 * next chunk, so it takes at most half of what the process gets and the audio path, on the event
 * loop in the same process (and the same cgroup quota), keeps the rest. Healthy: a few ms.
 */
const BUSY_MS = CHUNK_MS / 2
/**
 * Exact chunks in a row with every score far below its threshold (`WakeTrigger.rising`) before scoring is coarse again. A
 * later rise is caught as the first one was (its window's missing embeddings made late), so the
 * tail need not cover a head's window: 4 scored the bench's non-wake speech 14 % coarser than 16
 * with the same wakes (bench/RESULTS.md, "coarse scoring").
 */
const DENSE_TAIL_CHUNKS = 4
/**
 * Chunks with no voice near whose mel runs go to the runtime's thread together: 4 × 80 ms, held
 * back at most 240 ms, where no score is made anyway (#batchSize).
 */
const QUIET_BATCH = 4
/**
 * The second phase is scored from an exact score at this share of its threshold (0.05 at 0.5):
 * see bench/RESULTS.md, "the second phase", for the shares tried.
 */
const OFFSET_SHARE = 0.1
/** Chunks the second phase stays on after its last score at OFFSET_SHARE (as DENSE_TAIL_CHUNKS). */
const OFFSET_TAIL = DENSE_TAIL_CHUNKS
/** The pipeline's phase whose windows end half a chunk (40 ms) before the chunks' ends. */
const HALF_CHUNK_PHASE = 2

/**
 * openWakeWord's streaming detector behind the WakeWordDetector port. `push` copies a frame into
 * a ring of 80 ms chunks and returns; a background loop scores whole chunks (mel → embedding →
 * every head) on the runtime's own time. If it falls behind by more than the backlog, the oldest
 * chunks are dropped, counted and logged — the audio path never waits and memory stays bounded.
 * A chunk pushed with no voice nearby gets its mel frames only: most of a quiet room's cost saved,
 * and the embeddings it skipped are made when a voice comes (FeaturePipeline), so scores match.
 * While every score is far below its threshold it scores coarsely (`coarseHop`); a scorer slower
 * than real time rests between chunks and sheds the oldest audio (BUSY_MS, `onKeepingUp`).
 * When a chunk's scores are a wake is the `WakeTrigger`'s to say; whether scoring keeps up, the
 * `KeepingUp`'s.
 */
export class OpenWakeWordDetector implements WakeWordDetector {
  readonly phrases: readonly string[]
  /** Which runtime scores (native or wasm), for doctor and the logs. */
  readonly runtime: string
  readonly #o: OpenWakeWordDetectorOptions
  readonly #heads: Heads
  readonly #ring: ChunkRing
  readonly #trigger: WakeTrigger
  readonly #keepingUp: KeepingUp
  #scored = 0
  #quiet = 0
  #lastLag = 0
  #maxLag = 0
  /** At most `coarseHop`; 1 scores every chunk exactly. */
  readonly #hop: number
  /** Exact chunks still to score before coarse scoring may resume; Infinity when never coarse. */
  #denseLeft: number
  /** Chunks with a voice near not scored yet: end time, arrival time, per chunk. */
  readonly #pending: number[] = []
  #coarse = 0
  /** The further phases scored near a threshold (none: never). */
  readonly #offsets: OffsetPhase[]
  #restUntil = 0
  #rests = 0
  #draining: Promise<void> | undefined
  /** settled() is waiting: score what is queued without waiting for a batch. */
  #flushing = false
  #resetPending = false
  #closed = false

  constructor(options: OpenWakeWordDetectorOptions) {
    this.#o = options
    this.phrases = options.heads.map((h) => h.phrase)
    this.runtime = options.runtime
    this.#trigger = new WakeTrigger(options)
    this.#heads = new Heads(options.heads, (i, v) => this.#trigger.gate(i, v))
    this.#keepingUp = new KeepingUp({
      logger: options.logger,
      phrases: this.phrases.length,
      runtime: options.runtime,
      backlogMs: options.backlogMs,
      onKeepingUp: options.onKeepingUp,
    })
    this.#ring = new ChunkRing(options.backlogMs, options.now, (dropped, endAt) =>
      this.#keepingUp.note(dropped, endAt, this.#lastLag),
    )
    this.#hop = Math.max(1, Math.floor(options.coarseHop ?? 1))
    this.#denseLeft = this.#hop > 1 ? 0 : Number.POSITIVE_INFINITY
    this.#offsets = offsetPhases(options, this.#trigger, this.#heads, this.#hop)
  }

  push(frame: Uint8Array, capturedAtMs: number, voiceNearby = true): void {
    if (this.#closed) return
    this.#ring.write(frame, capturedAtMs, voiceNearby)
    if (this.#ring.queued > 0 && !this.#draining) this.#startDrain()
  }

  #startDrain(): void {
    this.#draining = this.#drain().finally(() => {
      this.#draining = undefined
    })
  }

  setThresholds(thresholds: readonly number[]): void {
    this.#trigger.setThresholds(thresholds)
  }

  reset(): void {
    this.#ring.clear()
    if (this.#draining) this.#resetPending = true
    else this.#applyReset()
  }

  stats(): DetectorStats {
    return {
      chunksScored: this.#scored,
      chunksQuiet: this.#quiet,
      coarseScores: this.#coarse,
      offsetScores: this.#offsets.reduce((n, o) => n + o.scores, 0),
      chunksDropped: this.#keepingUp.dropped,
      lastLagMs: this.#lastLag,
      maxLagMs: this.#maxLag,
      keepingUp: this.#keepingUp.keepingUp,
      rests: this.#rests,
    }
  }

  /** Resolves once every chunk pushed so far is scored (or dropped): for bulk scoring and tests. */
  async settled(): Promise<void> {
    // Chunks held back for a batch (#batchSize) are scored now, however few.
    this.#flushing = true
    try {
      do {
        while (this.#draining) await this.#draining
        if (this.#ring.queued > 0 && !this.#closed) this.#startDrain()
      } while (this.#draining)
    } finally {
      this.#flushing = false
    }
  }

  /**
   * Scores recorded PCM faster than real time (doctor, benchmarks, tests): 20 ms frames with
   * capture times from `startMs`, never more than 200 ms ahead of scoring, so nothing is dropped.
   * Resolves with the capture time of the last frame's end, once it is scored.
   */
  async scoreRecorded(pcm: Uint8Array, startMs = 0): Promise<number> {
    const frame = (SAMPLE_RATE_HZ / 50) * 2
    let at = startMs
    for (let i = 0, n = 0; i + frame <= pcm.length; i += frame, n++) {
      at += 20
      this.push(pcm.subarray(i, i + frame), at)
      if (n % 10 === 9) await this.settled()
    }
    await this.settled()
    return at
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#ring.clear()
    await this.settled()
    for (const m of [...this.#o.heads.map((h) => h.model), ...(this.#o.owned ?? [])]) {
      await m.close().catch(() => {})
    }
  }

  /**
   * How many chunks to take off the ring at once. While scoring is coarse or the room quiet, no
   * lone chunk's score is needed at once (a coarse score waits for `coarseHop` chunks, a quiet
   * chunk has none), so their mel runs go to the runtime's thread together (`melAhead`): fewer
   * hand-offs, the same runs. Exact scoring (near a threshold) takes one chunk at a time.
   */
  #batchSize(): number {
    if (this.#hop === 1 || this.#denseLeft > 0) return 1
    return this.#ring.anyHeard() ? this.#hop : QUIET_BATCH
  }

  async #drain(): Promise<void> {
    const ring = this.#ring
    while (ring.queued > 0 && !this.#closed) {
      const resting = this.#restUntil - this.#o.now()
      if (resting > 0) {
        await sleep(resting)
        continue
      }
      const batch = this.#batchSize()
      // Not enough chunks for a batch yet: the next push drains again (settled() flushes).
      if (ring.queued < batch && !this.#flushing) break
      const began = this.#o.now()
      const n = Math.min(ring.queued, batch)
      const taken: TakenChunk[] = []
      for (let k = 0; k < n; k++) {
        // One chunk: step() copies it before its first await. Several: copied as taken, since
        // their slots are the microphone's again from then on.
        const t = ring.take(n > 1)
        this.#trigger.noteEnergy(t.chunk)
        taken.push(t)
      }
      try {
        if (n > 1) await this.#o.features.melAhead(taken.map((t) => t.chunk))
        for (const t of taken) {
          if (this.#closed) return
          await this.#scoreChunk(t.chunk, t.endAt, t.arrivedAt, t.heard)
        }
      } catch (err) {
        if (this.#closed) return
        this.#o.logger.error(
          { event: 'wake_word_failed', err: errorText(err) },
          'wake word scoring failed; this chunk was skipped',
        )
      } finally {
        const busy = this.#o.now() - began
        if (busy > BUSY_MS * n) {
          this.#restUntil = this.#o.now() + busy
          this.#rests++
        }
      }
    }
    if (ring.queued === 0) this.#keepingUp.caughtUp()
  }

  /** One chunk: its mel frames, then as the room and the scores say (quiet, coarse, exact). */
  async #scoreChunk(
    chunk: Int16Array,
    endAt: number,
    arrivedAt: number,
    heard: boolean,
  ): Promise<void> {
    await this.#o.features.step(chunk)
    if (this.#resetPending) return this.#applyReset()
    if (!heard) {
      this.#flushPending()
      this.#quietChunk()
      return
    }
    this.#pending.push(endAt, arrivedAt)
    if (this.#denseLeft === 0) {
      // Coarse: one embedding every `coarseHop` chunks, the window's others stood in for.
      if (this.#pending.length < 2 * this.#hop) return
      await this.#o.features.embed(1)
      const longest = this.#heads.longest
      const coarse = await this.#heads.run(this.#o.features.approximate(longest), false)
      if (this.#resetPending) return this.#applyReset()
      this.#coarse++
      if (!this.#trigger.rising(coarse)) {
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
    }
    const behind = this.#pending.length / 2
    const longest = this.#heads.longest
    await this.#o.features.embed(longest + behind - 1)
    for (let b = behind - 1; b >= 0; b--) {
      const scores = await this.#heads.run(this.#o.features.latest(longest, b), true)
      if (this.#resetPending) break
      const p = 2 * (behind - 1 - b)
      const endAt = this.#pending[p] ?? 0
      this.#score(scores, endAt, this.#pending[p + 1] ?? 0)
      // Then the further phases' windows 20–60 ms earlier, made at the same moment: where phase 0
      // and another complete a wake at this chunk, it is phase 0's, as without further phases.
      let offsetRising = false
      for (const o of this.#offsets) {
        if (await o.score(scores, b, endAt, () => this.#resetPending)) offsetRising = true
      }
      if (this.#resetPending) break
      if (this.#hop > 1) {
        const rising = offsetRising || this.#trigger.rising(scores)
        this.#denseLeft = rising ? DENSE_TAIL_CHUNKS : this.#denseLeft - 1
      }
    }
    this.#pending.length = 0
    if (this.#resetPending) this.#applyReset()
  }

  /** Chunks waiting for a coarse score when the voice went: they count as below every threshold. */
  #flushPending(): void {
    for (let p = 0; p < this.#pending.length; p += 2) this.#quietChunk()
    this.#pending.length = 0
  }

  #score(raw: number[], endAt: number, arrivedAt: number): void {
    this.#scored++
    const scores = this.#trigger.warm(raw)
    const lag = this.#o.now() - arrivedAt
    this.#lastLag = lag
    if (lag > this.#maxLag) this.#maxLag = lag
    this.#o.onScores?.(scores, endAt)
    this.#trigger.judge(scores, endAt)
  }

  /** No wake could stand here: it counts as scored below every threshold, at no embedding's cost. */
  #quietChunk(): void {
    for (const o of this.#offsets) o.off()
    this.#quiet++
    this.#trigger.quiet()
  }

  #applyReset(): void {
    this.#resetPending = false
    this.#o.features.reset()
    this.#flushPending()
    if (this.#hop > 1) this.#denseLeft = 0
    for (const o of this.#offsets) o.off()
    this.#trigger.reset()
  }
}

/**
 * The further phases the detector scores near a threshold: see `offsetPhase`. A head whose window
 * they cannot hold (over ~46 embeddings: OFFSET_KEEP) goes without them.
 */
function offsetPhases(
  o: OpenWakeWordDetectorOptions,
  trigger: WakeTrigger,
  heads: Heads,
  hop: number,
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
        onScores: o.onOffsetScores,
      }),
  )
}
