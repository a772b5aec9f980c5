import { type Clock, monotonicNow, type TimerHandle } from '../ports/clock.js'

export interface ReadCadenceOptions {
  readonly clock: Clock
  /** One frame's length: the source writes (and the splitter cuts) frames of it. */
  readonly frameMs: number
  /**
   * Reads the source again after `read()` returned false (what came meanwhile waited for it), at
   * its next poll: a switch to per-frame reads (`every`).
   */
  readonly resume: () => void
  /**
   * At a burst's time: as `resume`, but what waits is read at once (the source not polled for
   * it), so a burst found waiting costs the timer's wake-up alone.
   */
  readonly readNow: () => void
  /**
   * How long after a burst's last frame is due the read comes: the wait a late frame may add.
   * Negative: before it, reading on until it comes (no wait added, two wake-ups a burst).
   */
  readonly slackMs?: number
}

/** What the rest of the device may ask of a microphone's reads (ArecordMic's). */
export type MicReads = Pick<ReadCadence, 'every' | 'align'>

const TIMING = {
  /** A few ms: a timer fires that late on a loaded board anyway; earlier, a late frame costs a wake. */
  slackMs: 3,
  /**
   * How much earlier the next read comes after one found its burst already waiting. Small: a read
   * that comes too soon waits for its burst (two wake-ups, and a poll to take back); at 2 ms one
   * burst in three did, at 0.5 one in six (measured). The reads sweep the same few ms after the
   * burst, only more slowly, so a chunk waits about as long on average.
   */
  nudgeMs: 0.5,
  /** A read this long after its resume found the audio arriving, not waiting: its time is known. */
  sameTurnMs: 2,
} as const

/**
 * When a microphone is read: each frame as it comes (a session: the model, a barge-in, the echo
 * gate want it at once), or — idle — in bursts of whole frames, so the process wakes once a burst
 * instead of once a frame (a Pi's budget is mostly those wake-ups: bench/RESULTS.md). Between
 * bursts the source is not read at all (its audio waits in the socket), then everything waiting is
 * read in one go and cut into the same frames; nothing is lost or reordered, and a switch to frames
 * takes effect at once. Bursts end on frame counts from the source's first frame — the wake-word
 * detector's 80 ms chunks counted the same way — and the read comes just after a burst's last frame
 * is due (its timing learnt from reads that saw it arrive), so a chunk is no later for scoring.
 */
export class ReadCadence {
  readonly #o: ReadCadenceOptions
  readonly #slackMs: number
  /** Frames a read waits for; 1: each as it comes. */
  #burst = 1
  /** Frames handed on since the source started (or the last `align()`). */
  #frames = 0
  /** A frame is being handed on: `align()` makes it a burst's first. */
  #handing = false
  /** When the next burst's last frame is expected (monotonic ms); NaN until one was seen arrive. */
  #due = Number.NaN
  #resumedAt = Number.NEGATIVE_INFINITY
  #timer: TimerHandle | undefined

  constructor(options: ReadCadenceOptions) {
    this.#o = options
    this.#slackMs = options.slackMs ?? TIMING.slackMs
  }

  /** Frames per read. */
  get burst(): number {
    return this.#burst
  }

  /**
   * Reads in bursts of `ms` (whole frames), or with `ms` of a frame or less each frame as it
   * comes — then at once: a paused source is read now, what waited for the burst first.
   * `nextMs`: the next burst ends once that much more audio has come (at least a frame), the
   * later ones `ms` apart from there: where a listener's batch is complete. A read already timed
   * for the old bursts is taken back; the source is read at its next poll and finds the new beat.
   */
  every(ms: number, nextMs?: number): void {
    const burst = Math.max(1, Math.round(ms / this.#o.frameMs))
    const changed = burst !== this.#burst
    this.#burst = burst
    if (burst > 1 && nextMs !== undefined) {
      const next = Math.min(burst, Math.max(1, Math.round(nextMs / this.#o.frameMs)))
      this.#frames = burst - next
    }
    if (!changed && nextMs === undefined) return
    // The next burst ends elsewhere: when the old one was due says nothing of it. Kept, a read that
    // found its frames waiting added the new burst to the old due time: the first 80 ms burst
    // after 320 ms ones came 320 ms late (a wake heard that much later).
    this.#due = Number.NaN
    if (this.#timer !== undefined) {
      this.#cancel()
      this.#o.resume()
    }
  }

  /** A frame is about to be handed on; `handed()` when it has been. */
  frame(): void {
    this.#frames++
    this.#handing = true
  }

  handed(): void {
    this.#handing = false
  }

  /**
   * A listener starts counting its chunks afresh (the wake-word detector reset): the frame being
   * handed on now — or, between frames, the next one — starts a burst, so bursts end where its
   * chunks do.
   */
  align(): void {
    this.#frames = this.#handing ? 1 : 0
  }

  /**
   * After each read, once its frames are handed on (`partialBytes`: of a frame not yet complete,
   * `bytesPerMs` to weigh them): whether to read on. False: the source is resumed later, by itself.
   */
  read(partialBytes = 0, bytesPerMs = 32): boolean {
    if (this.#burst === 1) return true
    const now = monotonicNow(this.#o.clock)
    const frameMs = this.#o.frameMs
    const into = this.#frames % this.#burst
    if (into === 0 && partialBytes === 0) {
      const burstMs = this.#burst * frameMs
      // Seen arriving (not found waiting at a resume): that is when the source's bursts end.
      // Found waiting, it came earlier than thought, by how much unknown: try a little earlier
      // next time, until one is seen arriving again (else a late one would set the beat for good).
      const seen = now - this.#resumedAt > TIMING.sameTurnMs
      if (seen || !(this.#due > now - burstMs)) this.#due = now
      else this.#due -= TIMING.nudgeMs
      this.#due += burstMs
      this.#pauseUntil(this.#due + this.#slackMs, now)
      return false
    }
    const leftMs = (this.#burst - into) * frameMs - partialBytes / bytesPerMs
    // The burst's last frame is next: read on and see it arrive.
    if (leftMs <= frameMs) return true
    // Off the beat (a late timer, a new source): back just before the burst's last frame.
    this.#pauseUntil(now + leftMs - frameMs / 2, now)
    return false
  }

  /** A new source: its first frame starts a burst. */
  reset(): void {
    this.#cancel()
    this.#frames = 0
    this.#handing = false
    this.#due = Number.NaN
  }

  stop(): void {
    this.#cancel()
  }

  #pauseUntil(at: number, now: number): void {
    this.#cancel()
    this.#timer = this.#o.clock.setTimeout(
      () => {
        this.#timer = undefined
        this.#resumedAt = monotonicNow(this.#o.clock)
        this.#o.readNow()
      },
      Math.max(0, at - now),
    )
  }

  #cancel(): void {
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
