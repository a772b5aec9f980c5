import { CHUNK_SAMPLES, SAMPLE_RATE_HZ } from './features.js'

const CHUNK_MS = (CHUNK_SAMPLES / SAMPLE_RATE_HZ) * 1000

/** One complete chunk taken off the ring, with when it ended and arrived and whether a voice was near. */
export interface TakenChunk {
  readonly chunk: Int16Array
  /** Capture time of the chunk's last sample. */
  readonly endAt: number
  /** Wall time the chunk was complete, for the scoring lag. */
  readonly arrivedAt: number
  readonly heard: boolean
}

/**
 * A deeper backlog for the detector's first moments: scoring's start (the runtime's first runs,
 * the streamed embedding's check, the JIT) costs seconds of a small CPU share, and the chunks it
 * falls behind by then are kept and scored late rather than dropped (bench/RESULTS.md, "the
 * drops' bursts").
 */
export interface RingStart {
  /** Unscored audio kept during the start. */
  readonly backlogMs: number
  /** How long the start lasts at most, in audio from the first chunk. */
  readonly ms: number
  /** A catch-up (`caughtUp`) this long after the first chunk, or later, ends the start. */
  readonly settleMs: number
  /**
   * From this much audio on, the start is given up (down to the ordinary backlog at once) as soon
   * as its backlog, falling as it fell over the last `judgeOverMs` of audio, would still be over
   * the ordinary one at the start's end: a board that cannot catch up then scores seconds late
   * for nothing and drops it all at the end anyway. Unset: never judged.
   */
  readonly judgeFromMs?: number | undefined
  readonly judgeOverMs?: number | undefined
}

/**
 * The detector's audio ring: microphone frames copied into 80 ms chunks, a backlog of them kept
 * while scoring catches up, and the oldest dropped for a new one when it is full — so scoring
 * always works on recent audio and memory stays bounded.
 */
export class ChunkRing {
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
  readonly #now: () => number
  /** Told of every complete chunk: how many of the oldest were dropped for it, and its end time. */
  readonly #onChunk: (dropped: number, endAt: number) => void
  /** Complete chunks kept at most: after the start, and during it (`RingStart`). */
  readonly #backlog: number
  readonly #startBacklog: number
  #startMs: number
  readonly #settleMs: number
  readonly #judgeFromMs: number
  /** Chunks queued as each of the last `judgeOverMs` of chunks came (a ring of its own). */
  readonly #queuedBefore: Int32Array
  #completed = 0
  /** Capture time the newest chunk ended at. */
  #lastEndAt = 0
  /** Capture time the first chunk ended at: the start is measured in audio from it. */
  #firstEndAt: number | undefined

  constructor(
    backlogMs: number,
    now: () => number,
    onChunk: (dropped: number, endAt: number) => void,
    start?: RingStart,
  ) {
    this.#backlog = Math.max(1, Math.ceil(backlogMs / CHUNK_MS))
    this.#startBacklog = Math.max(this.#backlog, Math.ceil((start?.backlogMs ?? 0) / CHUNK_MS))
    this.#startMs = start?.ms ?? 0
    this.#settleMs = start?.settleMs ?? 0
    this.#judgeFromMs = start?.judgeFromMs ?? Number.POSITIVE_INFINITY
    this.#queuedBefore = new Int32Array(
      Math.max(1, Math.round((start?.judgeOverMs ?? 0) / CHUNK_MS)),
    )
    // One slot more than the deepest backlog: the chunk being filled.
    const slots = this.#startBacklog + 1
    this.#slots = Array.from({ length: slots }, () => new Int16Array(CHUNK_SAMPLES))
    this.#endAt = new Float64Array(slots)
    this.#arrivedAt = new Float64Array(slots)
    this.#heard = new Uint8Array(slots)
    this.#now = now
    this.#onChunk = onChunk
  }

  /** Complete chunks waiting to be taken. */
  get queued(): number {
    return this.#queued
  }

  /** Copies a frame of 16-bit little-endian samples in; `voiceNearby` marks the chunks it touches. */
  write(frame: Uint8Array, capturedAtMs: number, voiceNearby: boolean): void {
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
      if (this.#fill === CHUNK_SAMPLES) this.#complete(capturedAtMs, samples - i)
    }
  }

  /** Audio (ms) already in the chunk being filled. */
  get fillingMs(): number {
    return (this.#fill / SAMPLE_RATE_HZ) * 1000
  }

  /** Whether any queued chunk had a voice near. */
  anyHeard(): boolean {
    for (let k = 0; k < this.#queued; k++) {
      if (this.#heard[(this.#read + k) % this.#slots.length] === 1) return true
    }
    return false
  }

  /**
   * Takes the oldest complete chunk. `copy` false lends the slot itself: read it before the next
   * `write`, which may fill it again.
   */
  take(copy: boolean): TakenChunk {
    const at = this.#read
    const slot = this.#slots[at] as Int16Array
    this.#read = (at + 1) % this.#slots.length
    this.#queued--
    return {
      chunk: copy ? slot.slice() : slot,
      endAt: this.#endAt[at] ?? 0,
      arrivedAt: this.#arrivedAt[at] ?? 0,
      heard: this.#heard[at] === 1,
    }
  }

  /**
   * Scoring has caught up (nothing left to send): once that happens `settleMs` or more after the
   * first chunk, the start is over and the ordinary backlog holds from the next chunk.
   */
  caughtUp(): void {
    if (this.#firstEndAt !== undefined && this.#lastEndAt - this.#firstEndAt >= this.#settleMs) {
      this.#startMs = 0
    }
  }

  /** Forgets every chunk, complete or not. */
  clear(): void {
    this.#queued = 0
    this.#fill = 0
    this.#fillHeard = false
  }

  /**
   * Whether the start, `intoMs` of audio in, is behind by more than the ordinary backlog and would
   * still be at its end were its backlog to fall as it fell over the last `judgeOverMs`: then the
   * start is over (`RingStart.judgeFromMs`).
   */
  #cannotCatchUp(intoMs: number): boolean {
    const before = this.#queuedBefore
    const at = this.#completed++ % before.length
    const then = before[at] ?? 0
    before[at] = this.#queued
    if (intoMs < this.#judgeFromMs || this.#queued < this.#backlog) return false
    const windowMs = before.length * CHUNK_MS
    const fallBy = ((then - this.#queued) * (this.#startMs - intoMs)) / windowMs
    if (this.#queued - fallBy < this.#backlog) return false
    this.#startMs = 0
    return true
  }

  /** The chunk being filled is complete; `samplesAfter` of the frame came after its end. */
  #complete(frameEndAtMs: number, samplesAfter: number): void {
    const slots = this.#slots
    this.#fill = 0
    const endAt = frameEndAtMs - (samplesAfter / SAMPLE_RATE_HZ) * 1000
    this.#firstEndAt ??= endAt
    this.#lastEndAt = endAt
    const starting =
      endAt - this.#firstEndAt < this.#startMs && !this.#cannotCatchUp(endAt - this.#firstEndAt)
    // Scoring is a backlog behind: drop the oldest chunks rather than queue without bound (at the
    // start's end, all those beyond the backlog at once).
    const keep = (starting ? this.#startBacklog : this.#backlog) - 1
    let dropped = 0
    while (this.#queued > keep) {
      this.#read = (this.#read + 1) % slots.length
      this.#queued--
      dropped++
    }
    const at = (this.#read + this.#queued) % slots.length
    this.#endAt[at] = endAt
    this.#arrivedAt[at] = this.#now()
    this.#heard[at] = this.#fillHeard ? 1 : 0
    this.#fillHeard = false
    this.#queued++
    this.#onChunk(dropped, endAt)
  }
}
