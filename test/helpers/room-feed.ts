import { closeSync, constants, openSync, writeSync } from 'node:fs'

/** One 20 ms frame of 16 kHz mono 16-bit audio. */
const FRAME_BYTES = 640
const FRAME_MS = 20

interface Feed {
  readonly path: string
  fd: number | undefined
  /** Bytes the current reader has been given since it opened the FIFO. */
  given: number
  /** Frames waiting their turn, oldest first. */
  readonly queue: Uint8Array[]
}

/**
 * Several rooms' microphones at the pace of real time: each feed writes 20 ms frames into the FIFO
 * a capture PCM reads (`hermeticAlsa('fifo')`), one frame per 20 ms for every feed in the same
 * tick, silence when nothing is queued. A file PCM is unpaced; this one is as fast as a microphone,
 * and the same sound reaches every feed at the same moment.
 *
 * A FIFO is opened for writing only once a reader holds it (O_NONBLOCK: ENXIO until then), so
 * `given` counts exactly what the current reader (an `arecord`) has heard since it started; when it
 * goes (EPIPE), the feed waits for the next one. Nothing blocks the test's event loop.
 */
export class RoomFeeds {
  readonly #feeds: Feed[]
  #timer: NodeJS.Timeout | undefined
  #t0 = 0
  #ticks = 0
  #speed = 1
  #hold: (() => boolean) | undefined
  #onWrite: ((feed: number, given: number) => void) | undefined

  constructor(paths: readonly string[]) {
    this.#feeds = paths.map((path) => ({ path, fd: undefined, given: 0, queue: [] }))
  }

  /**
   * Starts the clock; frames go out from now on, to each FIFO once its reader is there. `speed`
   * frames per 20 ms (a recording played faster than life); while `hold()` says so, none (the
   * rooms pause: a listener that cannot keep up at that speed is waited for, not overrun).
   * `onWrite` is told of every frame that went into a FIFO, as it went: the moment its sound
   * reached the microphone (a benchmark times from it).
   */
  start(
    options: {
      speed?: number
      hold?: () => boolean
      onWrite?: (feed: number, given: number) => void
    } = {},
  ): void {
    this.#speed = options.speed ?? 1
    this.#hold = options.hold
    this.#onWrite = options.onWrite
    this.#t0 = Date.now()
    this.#timer = setInterval(() => this.#tick(), FRAME_MS / 2)
  }

  /** Bytes feed `i`'s current reader has been given. */
  given(i: number): number {
    return (this.#feeds[i] as Feed).given
  }

  /** Whether feed `i` has a reader that has been given at least `ms` of audio. */
  heard(i: number, ms: number): boolean {
    const f = this.#feeds[i] as Feed
    return f.fd !== undefined && f.given >= ms * 32
  }

  /**
   * Queues `pcm` on each feed in `at` after `delayMs[i]` of silence, first aligning every feed so the
   * sound starts at the same place in its reader's 80 ms chunks (the wake-word detector scores
   * 1280-sample chunks counted from the reader's first frame): extra silence frames go out at once,
   * so readers that opened at different moments cut the same sound into the same chunks.
   */
  play(pcm: Uint8Array, feeds: readonly { i: number; delayMs?: number; gain?: number }[]): void {
    for (const { i, delayMs = 0, gain = 1 } of feeds) {
      const f = this.#feeds[i] as Feed
      if (f.fd === undefined || f.queue.length > 0) {
        throw new Error(`feed ${i} has no reader yet, or is still playing`)
      }
      // The delay's own silence counts too: the sound starts on a chunk's first sample all the same.
      const lead = Math.round(delayMs / FRAME_MS)
      const chunkFrames = 4
      const extra = (chunkFrames * 4 - ((f.given / FRAME_BYTES + lead) % chunkFrames)) % chunkFrames
      for (let k = 0; k < extra; k++) this.#write(f, new Uint8Array(FRAME_BYTES))
      for (let k = 0; k < lead; k++) f.queue.push(new Uint8Array(FRAME_BYTES))
      const scaled = scale(pcm, gain)
      for (let o = 0; o + FRAME_BYTES <= scaled.byteLength; o += FRAME_BYTES) {
        f.queue.push(scaled.subarray(o, o + FRAME_BYTES))
      }
    }
  }

  /** Whether every queued sound has gone out. */
  get idle(): boolean {
    return this.#feeds.every((f) => f.queue.length === 0)
  }

  stop(): void {
    clearInterval(this.#timer)
    for (const f of this.#feeds) {
      if (f.fd !== undefined) closeSync(f.fd)
      f.fd = undefined
    }
  }

  #tick(): void {
    // Catch up on every frame whose time has come: a late timer must not slow the rooms down.
    // The hold is asked before each frame, so a catch-up stops as soon as a listener is full.
    const due = Math.floor(((Date.now() - this.#t0) * this.#speed) / FRAME_MS)
    for (; this.#ticks < due; this.#ticks++) {
      if (this.#hold?.()) {
        this.#ticks = due
        return
      }
      for (const f of this.#feeds) {
        if (f.fd === undefined) this.#open(f)
        if (f.fd === undefined) continue
        const frame = f.queue.shift() ?? new Uint8Array(FRAME_BYTES)
        // A full pipe (its reader stalled) keeps the frame for the next tick.
        if (!this.#write(f, frame) && f.fd !== undefined) f.queue.unshift(frame)
      }
    }
  }

  #open(f: Feed): void {
    try {
      f.fd = openSync(f.path, constants.O_WRONLY | constants.O_NONBLOCK)
      f.given = 0
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err
    }
  }

  /** Whether the frame went into the pipe. */
  #write(f: Feed, frame: Uint8Array): boolean {
    if (f.fd === undefined) return false
    try {
      // Under PIPE_BUF: all of the frame or none of it.
      writeSync(f.fd, frame)
      f.given += frame.byteLength
      this.#onWrite?.(this.#feeds.indexOf(f), f.given)
      return true
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'EAGAIN') return false
      if (code !== 'EPIPE') throw err
      closeSync(f.fd)
      f.fd = undefined
      return false
    }
  }
}

function scale(pcm: Uint8Array, gain: number): Buffer {
  const out = Buffer.from(pcm)
  if (gain === 1) return out
  for (let o = 0; o + 1 < out.length; o += 2) {
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(out.readInt16LE(o) * gain))), o)
  }
  return out
}
