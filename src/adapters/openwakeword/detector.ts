import { setTimeout as sleep } from 'node:timers/promises'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { WakeListener, WakeWordDetector } from '../../ports/wake-word.js'
import { CHUNK_SAMPLES, EMBEDDING_SIZE, type FeaturePipeline, SAMPLE_RATE_HZ } from './features.js'
import type { ModelSession } from './model-session.js'
import type { VerifierStage } from './verifier.js'

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

/** Upstream forces each model's first 5 scores to 0 while its buffers fill with real audio. */
const WARMUP_CHUNKS = 5
/** The head's default window: 16 embeddings, 1.28 s. */
const DEFAULT_HEAD_WINDOW = 16
const CHUNK_MS = (CHUNK_SAMPLES / SAMPLE_RATE_HZ) * 1000
const FULL_SCALE_SQUARED = 32768 * 32768
/**
 * A chunk whose scoring took longer than this (wall time) means the board, or the CPU share the
 * process gets, cannot score in real time: scoring then rests as long as it worked before the
 * next chunk, so it takes at most half of what the process gets and the audio path, on the event
 * loop in the same process (and the same cgroup quota), keeps the rest. Healthy: a few ms.
 */
const BUSY_MS = CHUNK_MS / 2
/** Audio scored with no drop before the detector counts as keeping up again. */
const KEEP_UP_MS = 30_000
/**
 * A coarse score at this share of a phrase's threshold or above makes scoring exact (0.01 at
 * 0.5). At a fifth, coarse scoring lost 4 of 43 wakes on the bench's clean clips; at a fiftieth
 * none (bench/RESULTS.md, "coarse scoring").
 */
const RISING_SHARE = 0.02
/**
 * Exact chunks in a row with every score under RISING_SHARE before scoring is coarse again. A
 * later rise is caught as the first one was (its window's missing embeddings made late), so the
 * tail need not cover a head's window: 4 scored the bench's non-wake speech 14 % coarser than 16
 * with the same wakes (bench/RESULTS.md, "coarse scoring").
 */
const DENSE_TAIL_CHUNKS = 4
/** The level of a detection is the RMS over the head's window of chunks. */
const LEVEL_CHUNKS = 16

/**
 * openWakeWord's streaming detector behind the WakeWordDetector port. `push` copies a frame into
 * a ring of 80 ms chunks and returns; a background loop scores whole chunks (mel → embedding →
 * every head) on the runtime's own time. If it falls behind by more than the backlog, the oldest
 * chunks are dropped, counted and logged — the audio path never waits and memory stays bounded.
 * A chunk pushed with no voice nearby gets its mel frames only: most of a quiet room's cost saved,
 * and the embeddings it skipped are made when a voice comes (FeaturePipeline), so scores match.
 * While every score is far below its threshold it scores coarsely (`coarseHop`); a scorer slower
 * than real time rests between chunks and sheds the oldest audio (BUSY_MS, `onKeepingUp`).
 */
export class OpenWakeWordDetector implements WakeWordDetector {
  readonly phrases: readonly string[]
  /** Which runtime scores (native or wasm), for doctor and the logs. */
  readonly runtime: string
  readonly #o: OpenWakeWordDetectorOptions
  readonly #windows: number[]
  /** The longest head's window: how many embeddings are made before the heads run. */
  readonly #longest: number
  /** Chunk slots; `#read` is the oldest unscored, `#queued` how many are complete. */
  readonly #slots: Int16Array[]
  readonly #endAt: Float64Array
  readonly #arrivedAt: Float64Array
  /** Whether the chunk had a voice nearby (any frame of it did), or no hint was given. */
  readonly #heard: Uint8Array
  #fillHeard = false
  #read = 0
  #queued = 0
  /** Samples of the chunk being filled (it lives in the slot after the queued ones). */
  #fill = 0
  readonly #energy = new Float64Array(LEVEL_CHUNKS)
  #energyAt = 0
  #scored = 0
  #quiet = 0
  #sinceReset = 0
  readonly #above: number[]
  /** Each head's threshold now: the configured one until the sensitivity changes it. */
  #thresholds: readonly number[]
  #quietUntil = Number.NEGATIVE_INFINITY
  #dropped = 0
  #droppedInEpisode = 0
  #lastLag = 0
  #maxLag = 0
  /** At most `coarseHop`; 1 scores every chunk exactly. */
  readonly #hop: number
  /** Exact chunks still to score before coarse scoring may resume; Infinity when never coarse. */
  #denseLeft: number
  /** Chunks with a voice near not scored yet: end time, arrival time, per chunk. */
  readonly #pending: number[] = []
  #coarse = 0
  #keepingUp = true
  #lastDropAt = 0
  #restUntil = 0
  #rests = 0
  #draining: Promise<void> | undefined
  #resetPending = false
  #closed = false

  constructor(options: OpenWakeWordDetectorOptions) {
    this.#o = options
    this.phrases = options.heads.map((h) => h.phrase)
    this.runtime = options.runtime
    this.#windows = options.heads.map((h) => {
      const n = h.model.inputShape[1]
      return typeof n === 'number' && n > 0 ? n : DEFAULT_HEAD_WINDOW
    })
    this.#above = options.heads.map(() => 0)
    this.#thresholds = options.heads.map((h) => h.threshold)
    const slots = Math.max(2, Math.ceil(options.backlogMs / CHUNK_MS) + 1)
    this.#slots = Array.from({ length: slots }, () => new Int16Array(CHUNK_SAMPLES))
    this.#endAt = new Float64Array(slots)
    this.#arrivedAt = new Float64Array(slots)
    this.#heard = new Uint8Array(slots)
    this.#longest = Math.max(...this.#windows)
    this.#hop = Math.max(1, Math.floor(options.coarseHop ?? 1))
    this.#denseLeft = this.#hop > 1 ? 0 : Number.POSITIVE_INFINITY
  }

  push(frame: Uint8Array, capturedAtMs: number, voiceNearby = true): void {
    if (this.#closed) return
    const samples = frame.byteLength >> 1
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength)
    const slots = this.#slots
    let i = 0
    while (i < samples) {
      const slot = slots[(this.#read + this.#queued) % slots.length] as Int16Array
      const take = Math.min(CHUNK_SAMPLES - this.#fill, samples - i)
      // Per piece: a frame that ends one chunk and starts the next counts for both.
      if (voiceNearby) this.#fillHeard = true
      for (let k = 0; k < take; k++) slot[this.#fill + k] = view.getInt16((i + k) * 2, true)
      this.#fill += take
      i += take
      if (this.#fill === CHUNK_SAMPLES) this.#completeChunk(capturedAtMs, samples - i)
    }
    if (this.#queued > 0 && !this.#draining) {
      this.#draining = this.#drain().finally(() => {
        this.#draining = undefined
      })
    }
  }

  setThresholds(thresholds: readonly number[]): void {
    if (thresholds.length !== this.#o.heads.length || !thresholds.every((t) => t > 0 && t < 1)) {
      throw new RangeError(
        `wake thresholds: expected ${this.#o.heads.length} numbers in (0, 1), got [${thresholds.join(', ')}]`,
      )
    }
    this.#thresholds = [...thresholds]
  }

  reset(): void {
    this.#queued = 0
    this.#fill = 0
    this.#fillHeard = false
    if (this.#draining) this.#resetPending = true
    else this.#applyReset()
  }

  stats(): DetectorStats {
    return {
      chunksScored: this.#scored,
      chunksQuiet: this.#quiet,
      coarseScores: this.#coarse,
      chunksDropped: this.#dropped,
      lastLagMs: this.#lastLag,
      maxLagMs: this.#maxLag,
      keepingUp: this.#keepingUp,
      rests: this.#rests,
    }
  }

  /** Resolves once every chunk pushed so far is scored (or dropped): for bulk scoring and tests. */
  async settled(): Promise<void> {
    while (this.#draining) await this.#draining
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
    this.#queued = 0
    await this.settled()
    for (const m of [...this.#o.heads.map((h) => h.model), ...(this.#o.owned ?? [])]) {
      await m.close().catch(() => {})
    }
  }

  /** The chunk being filled is complete; `samplesAfter` of the frame came after its end. */
  #completeChunk(frameEndAtMs: number, samplesAfter: number): void {
    const slots = this.#slots
    this.#fill = 0
    const dropped = this.#queued === slots.length - 1
    if (dropped) {
      // Scoring is a backlog behind: drop the oldest chunk rather than queue without bound.
      this.#read = (this.#read + 1) % slots.length
      this.#queued--
      this.#dropped++
      if (this.#droppedInEpisode++ === 0) {
        this.#o.logger.warn(
          { event: 'wake_word_behind', backlogMs: this.#o.backlogMs, lagMs: this.#lastLag },
          'wake word scoring fell behind the microphone; dropping the oldest audio',
        )
      }
    }
    const at = (this.#read + this.#queued) % slots.length
    this.#endAt[at] = frameEndAtMs - (samplesAfter / SAMPLE_RATE_HZ) * 1000
    this.#noteKeepingUp(dropped, this.#endAt[at] ?? 0)
    this.#arrivedAt[at] = this.#o.now()
    this.#heard[at] = this.#fillHeard ? 1 : 0
    this.#fillHeard = false
    this.#queued++
  }

  async #drain(): Promise<void> {
    const slots = this.#slots
    while (this.#queued > 0 && !this.#closed) {
      const resting = this.#restUntil - this.#o.now()
      if (resting > 0) {
        await sleep(resting)
        continue
      }
      const began = this.#o.now()
      const at = this.#read
      const chunk = slots[at] as Int16Array
      const endAt = this.#endAt[at] ?? 0
      const arrivedAt = this.#arrivedAt[at] ?? 0
      const heard = this.#heard[at] === 1
      this.#noteEnergy(chunk)
      // step() copies the chunk before its first await, so the slot is free from here on.
      const stepping = this.#o.features.step(chunk)
      this.#read = (this.#read + 1) % slots.length
      this.#queued--
      try {
        await stepping
        if (this.#resetPending) {
          this.#applyReset()
          continue
        }
        if (!heard) {
          this.#flushPending()
          this.#quietChunk()
          continue
        }
        this.#pending.push(endAt, arrivedAt)
        if (this.#denseLeft === 0) {
          // Coarse: one embedding every `coarseHop` chunks, the window's others stood in for.
          if (this.#pending.length < 2 * this.#hop) continue
          await this.#o.features.embed(1)
          const coarse = await this.#runHeads(
            () => this.#o.features.approximate(this.#longest),
            false,
          )
          if (this.#resetPending) {
            this.#applyReset()
            continue
          }
          this.#coarse++
          if (!this.#rising(coarse)) {
            // Far below every threshold: the chunks since the last coarse score get this one.
            for (let p = 0; p < this.#pending.length; p += 2) {
              this.#score(coarse, this.#pending[p] ?? 0, this.#pending[p + 1] ?? 0)
            }
            this.#pending.length = 0
            continue
          }
          // A score is rising: every chunk from here is scored exactly, those since the last
          // coarse score included (their embeddings made late from the kept mel frames).
          this.#denseLeft = DENSE_TAIL_CHUNKS
        }
        const behind = this.#pending.length / 2
        await this.#o.features.embed(this.#longest + behind - 1)
        for (let b = behind - 1; b >= 0; b--) {
          const scores = await this.#runHeads(() => this.#o.features.latest(this.#longest, b), true)
          if (this.#resetPending) break
          const p = 2 * (behind - 1 - b)
          this.#score(scores, this.#pending[p] ?? 0, this.#pending[p + 1] ?? 0)
          if (this.#hop > 1)
            this.#denseLeft = this.#rising(scores) ? DENSE_TAIL_CHUNKS : this.#denseLeft - 1
        }
        this.#pending.length = 0
        if (this.#resetPending) this.#applyReset()
      } catch (err) {
        if (this.#closed) return
        this.#o.logger.error(
          { event: 'wake_word_failed', err: errorText(err) },
          'wake word scoring failed; this chunk was skipped',
        )
      } finally {
        const busy = this.#o.now() - began
        if (busy > BUSY_MS) {
          this.#restUntil = this.#o.now() + busy
          this.#rests++
        }
      }
    }
    if (this.#droppedInEpisode > 0 && this.#queued === 0) {
      this.#o.logger.info(
        { event: 'wake_word_caught_up', dropped: this.#droppedInEpisode },
        'wake word scoring caught up',
      )
      this.#droppedInEpisode = 0
    }
  }

  /**
   * Every head on its window of the newest embeddings (`window(n)` gives it); `exact` windows get
   * the household's verifier where the head reaches its gate, coarse ones never do.
   */
  #runHeads(window: () => Float32Array, exact: boolean): Promise<number[]> {
    const all = window()
    return Promise.all(
      this.#o.heads.map(async (h, i) => {
        const n = this.#windows[i] ?? DEFAULT_HEAD_WINDOW
        const mine = all.slice((this.#longest - n) * EMBEDDING_SIZE)
        const out = await h.model.run(mine, [1, n, EMBEDDING_SIZE])
        const score = out[0] ?? 0
        return exact && h.verifier && score >= this.#gate(i, h.verifier)
          ? h.verifier.score(mine, score)
          : score
      }),
    )
  }

  /** Whether any head's score is within reach of its threshold: where coarse scoring stops. */
  #rising(scores: readonly number[]): boolean {
    return scores.some((s, i) => s >= RISING_SHARE * (this.#thresholds[i] ?? 1))
  }

  /** Chunks waiting for a coarse score when the voice went: they count as below every threshold. */
  #flushPending(): void {
    for (let p = 0; p < this.#pending.length; p += 2) this.#quietChunk()
    this.#pending.length = 0
  }

  /**
   * A verifier's gate comes down with its phrase's threshold, in proportion (0.3 enrolled at 0.5 is
   * 0.18 at 0.3): at a high sensitivity the verifier can lift weaker head scores. Left at 0.3 it
   * would sit at that threshold, where the verifier can only turn wakes away: more false wakes than
   * normal and no better hearing. Above the configured threshold it stays: the verifier must clear
   * the higher threshold itself, and a higher gate only cost wakes (bench/RESULTS.md, "the
   * verifier's gate at each sensitivity").
   */
  #gate(i: number, verifier: VerifierStage): number {
    const configured = this.#o.heads[i]?.threshold ?? 0
    const now = this.#thresholds[i] ?? configured
    return now < configured ? (verifier.gate * now) / configured : verifier.gate
  }

  #score(raw: number[], endAt: number, arrivedAt: number): void {
    this.#scored++
    const warm = this.#sinceReset++ >= WARMUP_CHUNKS
    const scores = raw.map((s) => (warm ? s : 0))
    const lag = this.#o.now() - arrivedAt
    this.#lastLag = lag
    if (lag > this.#maxLag) this.#maxLag = lag
    this.#o.onScores?.(scores, endAt)
    let best = -1
    this.#o.heads.forEach((h, i) => {
      const s = scores[i] ?? 0
      this.#above[i] = s >= (this.#thresholds[i] ?? h.threshold) ? (this.#above[i] ?? 0) + 1 : 0
      if ((this.#above[i] ?? 0) >= this.#o.consecutive && (best < 0 || s > (scores[best] ?? 0))) {
        best = i
      }
    })
    if (best < 0 || endAt < this.#quietUntil) return
    this.#quietUntil = endAt + this.#o.refractoryMs
    this.#above.fill(0)
    const detection = {
      phrase: this.#o.heads[best]?.phrase ?? '',
      score: scores[best] ?? 0,
      heardAtMs: endAt,
      levelDb: this.#levelDb(),
    }
    try {
      this.#o.onWake(detection)
    } catch (err) {
      this.#o.logger.error(
        { event: 'wake_listener_failed', err: errorText(err) },
        'the wake listener threw',
      )
    }
  }

  /**
   * Keeping up means no chunk dropped in the last KEEP_UP_MS of audio: one drop turns it off at
   * once (with the fix in the log), and only that long without another turns it back on, so a
   * board at its limit does not flap between the two.
   */
  #noteKeepingUp(dropped: boolean, endAt: number): void {
    if (dropped) this.#lastDropAt = endAt
    if (dropped === !this.#keepingUp) return
    if (!dropped && endAt - this.#lastDropAt < KEEP_UP_MS) return
    this.#keepingUp = !dropped
    if (dropped) {
      this.#o.logger.warn(
        { event: 'wake_word_cannot_keep_up', phrases: this.phrases.length, runtime: this.runtime },
        'the wake word cannot keep up on this board: scoring sheds load, dropping the oldest audio',
      )
    } else {
      this.#o.logger.info({ event: 'wake_word_keeping_up' }, 'the wake word keeps up again')
    }
    try {
      this.#o.onKeepingUp?.(this.#keepingUp)
    } catch (err) {
      this.#o.logger.error(
        { event: 'wake_listener_failed', err: errorText(err) },
        'the keeping-up listener threw',
      )
    }
  }

  /** No wake could stand here: it counts as scored below every threshold, at no embedding's cost. */
  #quietChunk(): void {
    this.#quiet++
    this.#sinceReset++
    this.#above.fill(0)
  }

  #applyReset(): void {
    this.#resetPending = false
    this.#o.features.reset()
    this.#flushPending()
    if (this.#hop > 1) this.#denseLeft = 0
    this.#sinceReset = 0
    this.#above.fill(0)
    this.#energy.fill(0)
    this.#energyAt = 0
  }

  #noteEnergy(chunk: Int16Array): void {
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
