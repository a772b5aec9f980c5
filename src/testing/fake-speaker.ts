import type { AudioOut, DropReport } from '../ports/audio.js'
import type { Clock } from '../ports/clock.js'
import { LIVE_OUTPUT_RATE_HZ } from '../ports/live-llm.js'

/** One stretch of audio that really played: which bytes of the written stream, and when. */
export interface PlayedSpan {
  /** Offset of the first byte in everything ever written. */
  readonly fromByte: number
  readonly bytes: number
  readonly startedAt: number
}

/**
 * A speaker with a virtual playout clock: audio written plays in real time as the Clock moves,
 * one sample after another, with no device lead. It knows exactly what has played by now and
 * what a drop discarded, so tests can say "nothing played after the drop" and mean it.
 */
export class FakeSpeaker implements AudioOut {
  readonly sampleRateHz: number
  readonly #clock: Clock
  /** Bytes written and not yet played, oldest first. */
  #queue: Uint8Array[] = []
  #queuedBytes = 0
  /** When the current uninterrupted stretch of playback began, and how much of it has played. */
  #runStart = 0
  #runPlayed = 0
  /** The stretch the last recorded span belongs to. */
  #spanRun = Number.NaN
  #writtenTotal = 0
  #playedTotal = 0
  #playedSinceDrop = 0
  #closed = false
  readonly played: PlayedSpan[] = []
  readonly drops: (DropReport & { readonly at: number })[] = []
  /** How many times the voice driver said a reply's audio was complete. */
  endsOfReply = 0
  /** Every byte that really played, in order (kept only when `keepAudio` is set). */
  readonly #audio: Uint8Array[] = []
  readonly #keepAudio: boolean

  constructor(clock: Clock, opts: { sampleRateHz?: number; keepAudio?: boolean } = {}) {
    this.#clock = clock
    this.sampleRateHz = opts.sampleRateHz ?? LIVE_OUTPUT_RATE_HZ
    this.#keepAudio = opts.keepAudio ?? false
  }

  write(pcm: Uint8Array): void {
    if (this.#closed || pcm.byteLength === 0) return
    this.#advance()
    if (this.#queuedBytes === 0) {
      // The device was idle: this audio starts playing now.
      this.#runStart = this.#clock.now()
      this.#runPlayed = 0
    }
    this.#queue.push(pcm.slice())
    this.#queuedBytes += pcm.byteLength
    this.#writtenTotal += pcm.byteLength
  }

  /** Nothing to push out (no device periods here); counted, so tests can see it was said. */
  endOfReply(): void {
    this.endsOfReply++
  }

  drop(): DropReport {
    this.#advance()
    const report = {
      discardedMs: this.#ms(this.#queuedBytes),
      playedMs: this.#ms(this.#playedSinceDrop),
    }
    this.#queue = []
    this.#queuedBytes = 0
    this.#playedSinceDrop = 0
    this.drops.push({ ...report, at: this.#clock.now() })
    return report
  }

  playedMs(): number {
    this.#advance()
    return this.#ms(this.#playedSinceDrop)
  }

  queuedMs(): number {
    this.#advance()
    return this.#ms(this.#queuedBytes)
  }

  async close(): Promise<void> {
    this.#advance()
    this.#closed = true
  }

  /** Bytes ever written. */
  get writtenBytes(): number {
    return this.#writtenTotal
  }

  /** Bytes that really played, by the clock's now. */
  playedBytes(): number {
    this.#advance()
    return this.#playedTotal
  }

  /** Every byte that really played, concatenated (needs `keepAudio`). */
  audio(): Uint8Array {
    this.#advance()
    return Buffer.concat(this.#audio)
  }

  #ms(bytes: number): number {
    return (bytes / 2 / this.sampleRateHz) * 1000
  }

  /** Plays, by the clock, whatever the elapsed time allows. */
  #advance(): void {
    if (this.#queuedBytes === 0) return
    const now = this.#clock.now()
    // Whole samples due since this stretch began; computed from the start to avoid drift.
    const due = Math.floor(((now - this.#runStart) * this.sampleRateHz) / 1000) * 2
    let n = Math.min(due - this.#runPlayed, this.#queuedBytes)
    if (n <= 0) return
    const span: PlayedSpan = {
      fromByte: this.#writtenTotal - this.#queuedBytes,
      bytes: n,
      startedAt: this.#runStart + this.#ms(this.#runPlayed),
    }
    this.#runPlayed += n
    this.#playedTotal += n
    this.#playedSinceDrop += n
    this.#queuedBytes -= n
    while (n > 0) {
      const head = this.#queue[0] as Uint8Array
      const take = Math.min(n, head.byteLength)
      if (this.#keepAudio) this.#audio.push(head.subarray(0, take))
      if (take === head.byteLength) this.#queue.shift()
      else this.#queue[0] = head.subarray(take)
      n -= take
    }
    // One span per uninterrupted stretch: contiguous pieces are merged, so a long session of
    // frequent queries does not grow the record.
    const last = this.played.at(-1)
    if (last && this.#spanRun === this.#runStart && last.fromByte + last.bytes === span.fromByte) {
      this.played[this.played.length - 1] = { ...last, bytes: last.bytes + span.bytes }
    } else this.played.push(span)
    this.#spanRun = this.#runStart
  }
}
