import { setTimeout as sleep } from 'node:timers/promises'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { WakeListener, WakeWordDetector } from '../../ports/wake-word.js'
import { CHUNK_SAMPLES, EMBEDDING_SIZE, type FeaturePipeline, SAMPLE_RATE_HZ } from './features.js'
import { KeepingUp } from './keeping-up.js'
import type { ModelSession } from './model-session.js'
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

/** The head's default window: 16 embeddings, 1.28 s. */
const DEFAULT_HEAD_WINDOW = 16
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
    this.#trigger = new WakeTrigger(options)
    this.#keepingUp = new KeepingUp({
      logger: options.logger,
      phrases: this.phrases.length,
      runtime: options.runtime,
      backlogMs: options.backlogMs,
      onKeepingUp: options.onKeepingUp,
    })
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
    this.#trigger.setThresholds(thresholds)
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
      chunksDropped: this.#keepingUp.dropped,
      lastLagMs: this.#lastLag,
      maxLagMs: this.#maxLag,
      keepingUp: this.#keepingUp.keepingUp,
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
    }
    const at = (this.#read + this.#queued) % slots.length
    this.#endAt[at] = frameEndAtMs - (samplesAfter / SAMPLE_RATE_HZ) * 1000
    this.#keepingUp.note(dropped, this.#endAt[at] ?? 0, this.#lastLag)
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
      this.#trigger.noteEnergy(chunk)
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
          if (!this.#trigger.rising(coarse)) {
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
            this.#denseLeft = this.#trigger.rising(scores) ? DENSE_TAIL_CHUNKS : this.#denseLeft - 1
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
    if (this.#queued === 0) this.#keepingUp.caughtUp()
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
        return exact && h.verifier && score >= this.#trigger.gate(i, h.verifier)
          ? h.verifier.score(mine, score)
          : score
      }),
    )
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
    this.#quiet++
    this.#trigger.quiet()
  }

  #applyReset(): void {
    this.#resetPending = false
    this.#o.features.reset()
    this.#flushPending()
    if (this.#hop > 1) this.#denseLeft = 0
    this.#trigger.reset()
  }
}
