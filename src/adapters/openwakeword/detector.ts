import { setTimeout as sleep } from 'node:timers/promises'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { WakeDetection, WakeListener, WakeWordDetector } from '../../ports/wake-word.js'
import { type ChainResult, type ChunkChain, ScoringChain } from './chain.js'
import { ChunkRing, type TakenChunk } from './chunk-ring.js'
import type { CompanionModel } from './companion.js'
import { CHUNK_SAMPLES, type FeaturePipeline, SAMPLE_RATE_HZ } from './features.js'
import { KeepingUp } from './keeping-up.js'
import { LoopLateness } from './loop-lateness.js'
import type { ModelSession } from './model-session.js'
import type { VerifierStage } from './verifier.js'
import { checkThresholds } from './wake-trigger.js'

/** One wake phrase: its head model and the score at which it counts (until setThresholds). */
export interface WakeHead {
  readonly phrase: string
  readonly model: ModelSession
  readonly threshold: number
  /** The household's verifier: it rescores the chunks the head scores at or above its gate. */
  readonly verifier?: VerifierStage | undefined
  /** Our companion head beside the pretrained one (companion.ts). */
  readonly companion?: CompanionModel | undefined
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
  /**
   * Times scoring rested after a chunk took more than half a chunk's time while the event loop ran
   * late (load shed).
   */
  readonly rests: number
  /** Requests the chain was told it is behind in (BEHIND_CHUNKS: the far hop allowed). */
  readonly behindRequests: number
}

export interface OpenWakeWordDetectorOptions {
  readonly onWake: WakeListener
  /** The runtime's name, as doctor and the logs show it. */
  readonly runtime: string
  /**
   * The chain that scores (mel → embedding → heads → the wake rule), where the models run: one
   * request per scored chunk (model-thread.ts). Unset: scored in process on `features` and the
   * heads' models, each model run its own call (a test's runtime).
   */
  readonly chain?: ChunkChain | undefined
  /** The feature pipeline for a chain in process; required without `chain`. */
  readonly features?: FeaturePipeline | undefined
  readonly heads: readonly WakeHead[]
  /** Chunks (80 ms) in a row at or above a phrase's threshold before it fires. */
  readonly consecutive: number
  /** After a wake, no phrase fires again for this long (capture time). */
  readonly refractoryMs: number
  /** Unscored audio kept while scoring catches up; beyond it the oldest chunks are dropped. */
  readonly backlogMs: number
  /**
   * Unscored audio kept during the first START_MS of audio instead (unset: `backlogMs`): scoring's
   * own start costs seconds of a small CPU share, and the chunks it falls behind by then are
   * scored late, not dropped.
   */
  readonly startBacklogMs?: number | undefined
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
  /**
   * Told how the chain takes chunks whenever that changes: in batches of `everyMs` of audio, the
   * next complete once `nextMs` more has come. A microphone read in bursts that end there wakes
   * the process once a batch, and no batch waits for a read (mic-router.ts, `paceIdle`).
   */
  readonly onBatch?: ((everyMs: number, nextMs: number) => void) | undefined
  /** Wall clock (ms) for the scoring lag. */
  readonly now: () => number
  readonly onScores?: ScoreListener | undefined
  /**
   * Told when scoring starts dropping audio (false: this board cannot keep up) and when it has
   * kept up again for KEEP_UP_MS (true); the service shows it on the status, the LED and doctor.
   */
  readonly onKeepingUp?: ((keepingUp: boolean) => void) | undefined
  /**
   * Whether a session is under way now (the voice driver listening or talking). Only then does
   * scoring rest for an event loop running late (BUSY_MS, LATE_MS); unset, it always may.
   */
  readonly sessionOpen?: (() => boolean) | undefined
  /** Also closed with the detector (the feature models). */
  readonly owned?: readonly ModelSession[]
  /** The load's work still under way after the ready line (the embedding's streamed check). */
  readonly loadWork?: Promise<unknown> | undefined
}

const CHUNK_MS = (CHUNK_SAMPLES / SAMPLE_RATE_HZ) * 1000
/**
 * A chunk whose scoring took longer than this (wall time) while the event loop ran late (LATE_MS)
 * means the scorer takes CPU the audio path needs: scoring then rests for the time it worked beyond
 * this before the next chunk, so a scorer far slower than real time takes about half of what the
 * process gets and the event loop, in the same process (and the same cgroup quota), keeps the
 * rest. Healthy: a few ms. Only while a session is under way (`sessionOpen`), when the loop has a
 * session's work: idle, a rest only left the quota unused (docs/wake-word.md, "Never waiting on
 * scoring").
 */
const BUSY_MS = CHUNK_MS / 2
/**
 * How late the event loop must have run during a slow request (LoopLateness) for scoring to rest.
 * A slow request alone is not enough: inside a quota its wall time is mostly the quota's
 * throttling, and resting then left the quota idle while the backlog grew and dropped (inside
 * 1.7 % of a core, 1–4 rests a second and the process under its quota: bench/RESULTS.md, "the
 * runtime on its own thread"). Above a quota period (100 ms: a loop inside a quota waits up to one
 * period anyway) and far below the watchdog's 15 s.
 */
const LATE_MS = 150
/**
 * How long the detector's start lasts at most, in audio from its first chunk: its deeper backlog
 * (`startBacklogMs`) holds that long. Inside 2.5 % of a core the start fell 3–7 s behind and
 * caught up by 15–20 s (bench/RESULTS.md, "the drops' bursts"); beyond this, a board still that far
 * behind drops down to the ordinary backlog at once.
 */
const START_MS = 30_000
/**
 * The start ends sooner once scoring has caught up, from this much audio on: before it, the first
 * requests may return before the start's own work (the first runs, the streamed embedding's
 * check) has begun to cost.
 */
const START_SETTLE_MS = 3000
/**
 * From this much audio on, the start is judged (`RingStart.judgeFromMs`): if its backlog, falling
 * as it fell over the last START_JUDGE_OVER_MS, would not be down to the ordinary one by START_MS,
 * the board cannot catch up and the deeper backlog is given up at once. Not sooner: inside 2.5 % of
 * a core the start's backlog still grew until 10–11 s of audio before it fell by ~1 s a second
 * (bench/RESULTS.md, "the drops' bursts"); inside 1.7 % it grew to the deeper backlog's 10 s, and
 * those chunks were scored 10–12 s late and then dropped at the start's end all the same.
 */
const START_JUDGE_FROM_MS = 15_000
const START_JUDGE_OVER_MS = 5000
/**
 * Chunks with no voice near whose mel runs go to the runtime's thread together: 4 × 80 ms, held
 * back at most 240 ms, where no score is made anyway (#batchSize).
 */
const QUIET_BATCH = 4
/**
 * Coarse scores one request to the runtime's thread carries while a voice is near and every score
 * is far below its threshold: 2, so one request per 4 chunks at the service's hop, not 2. Each
 * request wakes the thread (and the event loop for its reply) from sleep, and a model run after a
 * sleep costs 2–3× one run hot (bench/RESULTS.md, "a talking room inside 2.5 %"); the chain scores
 * every chunk as it would one request at a time, so the scores are the same. A rise waits at
 * most 240 ms to be seen; from it on, chunks go as they are complete (EXACT_BEHIND_PER_REQUEST).
 */
const COARSE_SCORES_PER_REQUEST = 2
/**
 * Exact chunks (near a threshold) already waiting that one request carries at most. Exact scoring
 * sends each chunk as soon as it is complete, but a detector behind (a small CPU share) has several
 * waiting: each alone wakes the thread and runs its models cold, and inside 2.5 % of a core an
 * exact stretch scored 4–8 chunks a second against 12.5 arriving and dropped at the backlog
 * (bench/RESULTS.md, "the drops' bursts"). Sent together they are seen no later as a whole (they
 * are behind anyway) and the chain scores them as one by one. The cap: a request's wakes are said
 * when all its chunks are scored, so a wake in its first chunk waits for the other 3 to be scored
 * (~6 ms of CPU, ~0.25 s of wall time inside 2.5 %), and one request holds the thread for no more
 * than 320 ms of audio, as a coarse one does.
 */
const EXACT_BEHIND_PER_REQUEST = 4
/**
 * Chunks still waiting after a request is taken for the chain to be told it is behind (480 ms of
 * audio beyond the request): far below every threshold it may then score at the far hop
 * (chain.ts, FAR_SHARE) rather than fall further behind and drop chunks unheard. Bulk scoring
 * (`scoreRecorded`) stays within 200 ms and is never behind.
 */
const BEHIND_CHUNKS = 6

/**
 * openWakeWord's streaming detector behind the WakeWordDetector port. `push` copies a frame into
 * a ring of 80 ms chunks and returns; a background loop hands whole chunks to the scoring chain
 * (chain.ts: mel → embedding → every head → the wake rule), which runs where the models run, and
 * replays what it said here: scores, wakes, the windows the household keeps. If scoring falls
 * behind by more than the backlog, the oldest chunks are dropped, counted and logged — the audio
 * path never waits and memory stays bounded; while a session is under way, a scorer slower than
 * real time that holds the event loop back rests between chunks and sheds the oldest audio
 * (BUSY_MS, LATE_MS). Whether scoring keeps up is the `KeepingUp`'s to say (`onKeepingUp`).
 */
export class OpenWakeWordDetector implements WakeWordDetector {
  readonly phrases: readonly string[]
  /** Which runtime scores (native or wasm), for doctor and the logs. */
  readonly runtime: string
  readonly #o: OpenWakeWordDetectorOptions
  readonly #chain: ChunkChain
  readonly #ring: ChunkRing
  readonly #keepingUp: KeepingUp
  readonly #lateness: LoopLateness
  #thresholds: readonly number[]
  #scored = 0
  #quiet = 0
  #coarse = 0
  #offsetScores = 0
  #lastLag = 0
  #maxLag = 0
  /** At most `coarseHop`; 1 scores every chunk exactly. */
  readonly #hop: number
  /** The chain scores exactly (a score is near a threshold): chunks go as they are complete. */
  #exact: boolean
  /** The batch (chunks) `onBatch` was last told; 0: not yet. */
  #toldBatch = 0
  #restUntil = 0
  #rests = 0
  #behindRequests = 0
  #draining: Promise<void> | undefined
  /**
   * The drain loop is under way. Cleared as the loop ends, in the same turn: a burst of frames
   * handed on in one go can complete a batch after an earlier chunk's drain found too few, and
   * `#draining` is cleared only once that turn is over.
   */
  #running = false
  /** settled() is waiting: score what is queued without waiting for a batch. */
  #flushing = false
  /** A reset was asked for: what the chain says of earlier audio is dropped, and it starts over. */
  #resetAsked = false
  #closed = false
  /** Chunks the chain has taken (scored, coarse or quiet), and who waits for a count of them. */
  #through = 0
  #waiting: { readonly at: number; readonly done: (reached: boolean) => void }[] = []

  constructor(options: OpenWakeWordDetectorOptions) {
    this.#o = options
    this.phrases = options.heads.map((h) => h.phrase)
    this.runtime = options.runtime
    this.#thresholds = options.heads.map((h) => h.threshold)
    this.#chain = options.chain ?? localChain(options)
    this.#keepingUp = new KeepingUp({
      logger: options.logger,
      phrases: this.phrases.length,
      runtime: options.runtime,
      backlogMs: options.backlogMs,
      onKeepingUp: options.onKeepingUp,
    })
    this.#ring = new ChunkRing(
      options.backlogMs,
      options.now,
      (dropped, endAt) => this.#keepingUp.note(dropped, endAt, this.#lastLag),
      {
        backlogMs: options.startBacklogMs ?? options.backlogMs,
        ms: START_MS,
        settleMs: START_SETTLE_MS,
        judgeFromMs: START_JUDGE_FROM_MS,
        judgeOverMs: START_JUDGE_OVER_MS,
      },
    )
    this.#lateness = new LoopLateness()
    this.#hop = Math.max(1, Math.floor(options.coarseHop ?? 1))
    this.#exact = this.#hop === 1
  }

  push(frame: Uint8Array, capturedAtMs: number, voiceNearby = true): void {
    if (this.#closed) return
    this.#ring.write(frame, capturedAtMs, voiceNearby)
    if (this.#toldBatch === 0) this.#tellBatch()
    if (this.#ring.queued > 0 && !this.#running) this.#startDrain()
  }

  #startDrain(): void {
    this.#running = true
    const drain = this.#drain().finally(() => {
      if (this.#draining === drain) this.#draining = undefined
    })
    this.#draining = drain
  }

  setThresholds(thresholds: readonly number[]): void {
    checkThresholds(thresholds, this.#o.heads.length)
    this.#thresholds = [...thresholds]
  }

  reset(): void {
    this.#ring.clear()
    this.#resetAsked = true
    this.#exact = this.#hop === 1
    this.#tellBatch()
  }

  stats(): DetectorStats {
    return {
      chunksScored: this.#scored,
      chunksQuiet: this.#quiet,
      coarseScores: this.#coarse,
      offsetScores: this.#offsetScores,
      chunksDropped: this.#keepingUp.dropped,
      lastLagMs: this.#lastLag,
      maxLagMs: this.#maxLag,
      keepingUp: this.#keepingUp.keepingUp,
      rests: this.#rests,
      behindRequests: this.#behindRequests,
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
   * Resolves true once the load's own work after the ready line (`loadWork`) has settled and, from
   * then on, the chain has taken `chunks` more chunks; false if the detector closes first. What the
   * load touched once of the runtime's code is given back after this (app/compose/cold-pages.ts).
   */
  async afterChunks(chunks: number): Promise<boolean> {
    await this.#o.loadWork?.catch(() => {})
    if (this.#closed) return false
    const at = this.#through + chunks
    if (chunks <= 0) return true
    return new Promise<boolean>((done) => this.#waiting.push({ at, done }))
  }

  #took(chunks: number): void {
    this.#through += chunks
    // Every score request passes here; nobody waits after the start's one release.
    if (this.#waiting.length === 0) return
    const due = this.#waiting.filter((w) => w.at <= this.#through)
    if (due.length === 0) return
    this.#waiting = this.#waiting.filter((w) => w.at > this.#through)
    for (const w of due) w.done(true)
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
    for (const w of this.#waiting.splice(0)) w.done(false)
    this.#ring.clear()
    await this.settled()
    await this.#chain.close().catch(() => {})
    for (const m of [...this.#o.heads.map((h) => h.model), ...(this.#o.owned ?? [])]) {
      await m.close().catch(() => {})
    }
  }

  /**
   * How many chunks go to the chain at once. While scoring is coarse or the room quiet, no lone
   * chunk's score is needed at once (a coarse score waits for `coarseHop` chunks, a quiet chunk
   * has none), so they go together: one hand-off, the same runs. Exact scoring (near a
   * threshold) sends each chunk as soon as it is complete, with those already waiting behind it
   * (EXACT_BEHIND_PER_REQUEST).
   */
  #batchSize(): number {
    if (this.#exact) return 1
    return this.#ring.anyHeard() ? COARSE_SCORES_PER_REQUEST * this.#hop : QUIET_BATCH
  }

  /**
   * Tells `onBatch` when the batch changes: one chunk while exact, else the smaller of a quiet
   * and a coarse batch (both 4 at the service's hop), whatever the room. Behind (a batch already
   * waiting), the next read still ends where a chunk does: its bursts stay on the chunks' beat.
   */
  #tellBatch(): void {
    const onBatch = this.#o.onBatch
    if (!onBatch) return
    const batch = this.#exact ? 1 : Math.min(QUIET_BATCH, COARSE_SCORES_PER_REQUEST * this.#hop)
    if (batch === this.#toldBatch) return
    this.#toldBatch = batch
    const ring = this.#ring
    onBatch(batch * CHUNK_MS, Math.max(1, batch - ring.queued) * CHUNK_MS - ring.fillingMs)
  }

  async #drain(): Promise<void> {
    // `#running` clears as the loop ends: in this same turn when the loop awaited nothing.
    try {
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
        const n = Math.min(ring.queued, this.#exact ? EXACT_BEHIND_PER_REQUEST : batch)
        // Copied as taken: their slots are the microphone's again from here on.
        const chunks: TakenChunk[] = []
        for (let k = 0; k < n; k++) chunks.push(ring.take(true))
        const reset = this.#resetAsked
        this.#resetAsked = false
        const behind = ring.queued >= BEHIND_CHUNKS
        if (behind) this.#behindRequests++
        this.#lateness.arm()
        try {
          const r = await this.#chain.score({ reset, thresholds: this.#thresholds, chunks, behind })
          if (this.#closed) return
          this.#took(chunks.length)
          this.#replay(r)
          this.#tellBatch()
          if (ring.queued < this.#batchSize()) ring.caughtUp()
        } catch (err) {
          if (this.#closed) return
          this.#o.logger.error(
            { event: 'wake_word_failed', err: errorText(err) },
            'wake word scoring failed; this chunk was skipped',
          )
        } finally {
          const busy = this.#o.now() - began
          const late = this.#lateness.disarm()
          if (busy > BUSY_MS * n && late > LATE_MS && this.#o.sessionOpen?.() !== false) {
            this.#restUntil = this.#o.now() + busy - BUSY_MS * n
            this.#rests++
          }
        }
      }
      if (ring.queued === 0) this.#keepingUp.caughtUp()
    } finally {
      this.#running = false
    }
  }

  /**
   * What the chain said, in order. A reset asked for meanwhile (a wake's listener may ask) drops
   * the rest: it is about audio before the reset.
   */
  #replay(r: ChainResult): void {
    this.#quiet += r.quiet
    this.#coarse += r.coarse
    this.#offsetScores += r.offsetScores
    if (this.#resetAsked) return
    this.#exact = r.exact || this.#hop === 1
    for (const e of r.events) {
      if (this.#resetAsked) return
      if (e.kind === 'scores') this.#score(e.scores, e.endAt, e.arrivedAt)
      else if (e.kind === 'offset') this.#o.onOffsetScores?.(e.scores, e.at)
      else if (e.kind === 'window') this.#o.heads[e.head]?.verifier?.score(e.window, e.score)
      else this.#wake(e.detection)
    }
  }

  #score(scores: number[], endAt: number, arrivedAt: number): void {
    this.#scored++
    const lag = this.#o.now() - arrivedAt
    this.#lastLag = lag
    if (lag > this.#maxLag) this.#maxLag = lag
    this.#o.onScores?.(scores, endAt)
  }

  #wake(detection: WakeDetection): void {
    try {
      this.#o.onWake(detection)
    } catch (err) {
      this.#o.logger.error(
        { event: 'wake_listener_failed', err: errorText(err) },
        'the wake listener threw',
      )
    }
  }
}

/** The chain in process, on the options' feature pipeline and the heads' own sessions. */
function localChain(o: OpenWakeWordDetectorOptions): ScoringChain {
  if (!o.features) throw new Error('OpenWakeWordDetector: neither a chain nor features given')
  return new ScoringChain({ ...o, features: o.features })
}
