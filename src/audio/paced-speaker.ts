import type { Logger } from '../core/logger.js'
import type { AudioOut, DropReport } from '../ports/audio.js'
import { type Clock, monotonicNow, type TimerHandle } from '../ports/clock.js'
import { bytesForMs, msForBytes } from './pcm.js'
import type { SpeakerDevice } from './speaker-device.js'

export interface PacedSpeakerOptions {
  readonly device: SpeakerDevice
  readonly sampleRateHz: number
  readonly clock: Clock
  /** How far ahead of what has played the device is fed (see the defaults below). */
  readonly leadMs?: number | undefined
  /** How often the queue is looked at. */
  readonly tickMs?: number | undefined
  /**
   * A device that has taken in nothing for this long while it had audio to take is hung: it is
   * replaced and what it held is dropped. Needs `device.progress`.
   */
  readonly stallMs?: number | undefined
  /**
   * Without the model's end-of-reply word: the reply is taken to be over once the device has all
   * of it and nothing more was written for this long, and its end goes to the device then.
   */
  readonly quietEndMs?: number | undefined
  readonly logger?: Logger
}

/**
 * A 1 s lead topped up every 500 ms: the device always holds 500–1000 ms, so a late timer (a busy
 * machine) has 500 ms before the device runs dry (measured: a 200 ms lead still gapped on a loaded
 * machine, bench/RESULTS.md), and a reply costs two wake-ups a second while Nocturn holds some of
 * it, none once the device has all of it (`#schedule`). A small lead buys nothing where the drop
 * kills the player, which is what removes stale audio (hardware/audio.md); aplay's buffer (1 s)
 * and its pipe (64 KiB, 1.3 s at 24 kHz) hold the lead. PortAudio cannot be killed: its device
 * keeps the lead in JS and passes on only what the sound card needs next.
 */
export const DEFAULT_LEAD_MS = 1000
export const DEFAULT_TICK_MS = 500
const DEFAULT_STALL_MS = 1000
/**
 * A live model hands over a reply faster than it plays, in chunks well under 200 ms apart; a
 * pause this long with the whole reply in the device is its end. Measured (bench/RESULTS.md,
 * "The tail after a drop"): padding only when the run ends came after the player had run dry on
 * a loaded machine, and the tail stayed in it until the next reply.
 */
const DEFAULT_QUIET_END_MS = 200

/**
 * The one speaker buffer every backend shares: Nocturn keeps the reply in its own queue and feeds
 * the device only `leadMs` ahead of the real-time play position, so a drop has little in the
 * device to take back and what was heard is known. What has played is inferred from a monotonic
 * clock (never the wall clock, which can step) since the device started on the current run of
 * audio; a run ends when the device has played everything it was fed.
 */
export class PacedSpeaker implements AudioOut {
  readonly sampleRateHz: number
  readonly #device: SpeakerDevice
  readonly #clock: Clock
  readonly #leadBytes: number
  readonly #tickMs: number
  readonly #stallMs: number
  readonly #quietEndMs: number
  #lastWriteAt = Number.NEGATIVE_INFINITY
  readonly #logger: Logger | undefined
  readonly #bytesPerMs: number
  #chunks: Uint8Array[] = []
  #head = 0 // read offset into #chunks[0]
  #queuedBytes = 0 // in Nocturn's queue, not yet handed to the device
  #runStart = 0 // monotonic time at which the device began playing the current run
  #runFed = 0 // bytes handed to the device in the current run
  #running = false
  #padded = false // endOfAudio already sent for what the device holds
  #replyEnded = false // the model said the queued audio is the whole reply
  #playedBefore = 0 // bytes played in earlier runs since the last drop
  #timer: TimerHandle | undefined
  #timerDue = 0 // monotonic time the pending timer fires at
  #closed = false
  // The stall watch: the device's last progress reading, when it changed, and what was fed by then.
  #progress: number | undefined
  #progressAt = 0
  #fedTotal = 0
  #fedAtProgress = 0
  #checkedAt = Number.NEGATIVE_INFINITY // when the device's progress was last read
  readonly #tick = () => {
    this.#timer = undefined
    this.#pump()
  }

  constructor(options: PacedSpeakerOptions) {
    this.#device = options.device
    this.sampleRateHz = options.sampleRateHz
    this.#clock = options.clock
    this.#leadBytes = bytesForMs(options.sampleRateHz, options.leadMs ?? DEFAULT_LEAD_MS)
    this.#tickMs = options.tickMs ?? DEFAULT_TICK_MS
    this.#stallMs = options.stallMs ?? DEFAULT_STALL_MS
    this.#quietEndMs = options.quietEndMs ?? DEFAULT_QUIET_END_MS
    this.#logger = options.logger
    this.#bytesPerMs = (options.sampleRateHz * 2) / 1000
  }

  write(pcm: Uint8Array): void {
    if (this.#closed || pcm.byteLength === 0) return
    this.#chunks.push(pcm)
    this.#queuedBytes += pcm.byteLength
    this.#padded = false // audio after the padding will need its own
    this.#replyEnded = false
    this.#lastWriteAt = this.#now()
    if (!this.#running) {
      this.#running = true
      this.#runStart = this.#now()
      this.#runFed = 0
      // A run ending by the clock says nothing about the device: what it was fed and has not
      // shown it took is still owed, so the watch goes on across runs (only a replaced device
      // starts afresh). Looked at now: a player that froze between replies is replaced before
      // this one is fed to it.
      this.#checkedAt = Number.NEGATIVE_INFINITY
    }
    // Feed now rather than at the next tick: the first syllable starts without delay, and a
    // device that holds less than the lead (a reply's first chunks) gets each chunk as it comes —
    // at the next tick it could be too late (measured: a 100 ms first chunk ran dry before a tick
    // 100 ms later handed over the second, which had been here for 50 ms).
    this.#pump()
  }

  endOfReply(): void {
    if (this.#closed || !this.#running) return
    this.#replyEnded = true
    // All of it already handed over: pad now. Else the pump pads when it hands over the last byte.
    if (this.#queuedBytes === 0 && !this.#padded) this.#pad()
  }

  drop(): DropReport {
    const now = this.#now()
    const playedNow = this.#playedInRun(now)
    const discarded = this.#queuedBytes + (this.#runFed - playedNow)
    const played = this.#playedBefore + playedNow
    if (this.#running && this.#runFed > 0) this.#silenceDevice()
    this.#chunks = []
    this.#head = 0
    this.#queuedBytes = 0
    this.#endRun()
    this.#playedBefore = 0
    return { discardedMs: this.#ms(discarded), playedMs: this.#ms(played) }
  }

  playedMs(): number {
    return this.#ms(this.#playedBefore + this.#playedInRun(this.#now()))
  }

  queuedMs(): number {
    const inDevice = this.#runFed - this.#playedInRun(this.#now())
    return this.#ms(this.#queuedBytes + inDevice)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // Not drop(): silencing would start a fresh player only for close() to stop it again.
    this.#chunks = []
    this.#head = 0
    this.#queuedBytes = 0
    this.#endRun()
    await this.#device.close()
  }

  #now(): number {
    return monotonicNow(this.#clock)
  }

  /** Bytes of the current run the device has played by `now`: real time, capped at what it got. */
  #playedInRun(now: number): number {
    if (!this.#running) return 0
    const byClock = Math.floor((now - this.#runStart) * this.#bytesPerMs) & ~1
    return Math.min(byClock, this.#runFed)
  }

  #pump(): void {
    const now = this.#now()
    const hung = this.#hung(now)
    if (hung) {
      const frozen = hung === 'frozen'
      // What the hung device held was due by now: it is stale. Play on from the current position.
      this.#logger?.warn(
        {
          event: 'speaker_stalled',
          stalledMs: Math.round(now - this.#progressAt),
          ...(frozen && { frozen }),
        },
        frozen
          ? 'speaker process is stopped; replacing it'
          : 'speaker stopped taking audio; replacing it',
      )
      this.#silenceDevice()
    }
    const played = this.#playedInRun(now)
    if (played >= this.#runFed && this.#runFed > 0) {
      if (this.#queuedBytes === 0) {
        if (!this.#padded) this.#device.endOfAudio?.()
        this.#endRun()
        return
      }
      // The device ran dry (a late timer): it has been silent since, so play resumes from now.
      this.#runStart = now - this.#runFed / this.#bytesPerMs
    }
    let want = Math.min(played + this.#leadBytes - this.#runFed, this.#queuedBytes)
    while (want > 0) {
      const chunk = this.#chunks[0] as Uint8Array
      const take = Math.min(want, chunk.byteLength - this.#head)
      this.#device.write(
        this.#head === 0 && take === chunk.byteLength
          ? chunk
          : chunk.subarray(this.#head, this.#head + take),
      )
      this.#head += take
      this.#runFed += take
      this.#fedTotal += take
      this.#queuedBytes -= take
      want -= take
      if (this.#head === chunk.byteLength) {
        this.#chunks.shift()
        this.#head = 0
      }
    }
    // The model said the reply is complete and its last byte is out: let the device push out
    // what it holds back (a partial period), so the reply's last samples follow on without a
    // pause. The word comes with the last chunk, a lead ahead of playback. Guessing the end from
    // the clock instead (pad when the device is about to run dry) was measured to do harm both
    // ways: a timer that fires late leaves the player no time to hand the last period on (the
    // tail came 7–40 ms late), and a model only just ahead of playback finds its next chunk behind
    // the padding (40 ms of silence mid-reply; bench/RESULTS.md). Without the word, the padding
    // goes once writes have stopped for `quietEndMs` with all of it handed over (a reply is
    // streamed faster than it plays), or when the run ends if that comes first.
    if (
      !this.#padded &&
      this.#queuedBytes === 0 &&
      (this.#replyEnded || now - this.#lastWriteAt >= this.#quietEndMs)
    ) {
      this.#pad()
    }
    this.#schedule(now, played)
  }

  /**
   * The next look: every tick while Nocturn's queue holds audio (to keep the lead), and once the
   * device has all of it, when the device should have played the last of it — so the run's end
   * is seen on time, and a device that is only playing out costs no wake-ups until then.
   */
  #schedule(now: number, played: number): void {
    const untilDryMs = (this.#runFed - played) / this.#bytesPerMs
    const untilQuietMs = this.#padded ? untilDryMs : this.#lastWriteAt + this.#quietEndMs - now
    const delay =
      this.#queuedBytes > 0
        ? Math.min(this.#tickMs, untilDryMs)
        : Math.min(untilQuietMs, untilDryMs)
    const due = now + Math.max(1, Math.ceil(delay))
    if (this.#timer !== undefined) {
      if (this.#timerDue <= due) return
      this.#clock.clearTimeout(this.#timer)
    }
    this.#timerDue = due
    this.#timer = this.#clock.setTimeout(this.#tick, due - now)
  }

  /**
   * 'frozen' when the device's process is stopped; 'stalled' when it has shown no progress for
   * `stallMs` although it was fed since its last progress. A device that took everything it was
   * given and is waiting for more is neither.
   */
  #hung(now: number): 'frozen' | 'stalled' | undefined {
    // Reading progress costs a few system calls (aplay's /proc entries): a quarter of the stall
    // limit apart is often enough to catch a hang within 1.25 × the limit.
    if (now - this.#checkedAt < this.#stallMs / 4) return undefined
    this.#checkedAt = now
    // Stopped (SIGSTOP): replaced at once. Waiting for no progress cannot see it when the device
    // had taken all it was fed before it stopped — a reply shorter than the lead — and the next
    // reply would sit in its pipe until someone resumed it.
    if (this.#device.frozen?.() === true) return 'frozen'
    const progress = this.#device.progress?.()
    if (progress === undefined) return undefined
    if (progress !== this.#progress) {
      this.#progress = progress
      this.#progressAt = now
      this.#fedAtProgress = this.#fedTotal
      return undefined
    }
    if (this.#fedTotal === this.#fedAtProgress) {
      this.#progressAt = now
      return undefined
    }
    return now - this.#progressAt >= this.#stallMs ? 'stalled' : undefined
  }

  #pad(): void {
    this.#padded = true
    this.#device.endOfAudio?.()
  }

  #silenceDevice(): void {
    this.#device.silence()
    this.#watchFrom(this.#now())
  }

  #watchFrom(now: number): void {
    this.#checkedAt = now
    this.#progress = this.#device.progress?.()
    this.#progressAt = now
    this.#fedAtProgress = this.#fedTotal
  }

  #endRun(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    this.#playedBefore += this.#runFed > 0 ? this.#playedInRun(this.#now()) : 0
    this.#running = false
    this.#padded = false
    this.#replyEnded = false
    this.#runFed = 0
  }

  #ms(bytes: number): number {
    return msForBytes(this.sampleRateHz, bytes)
  }
}
