/** How often the probe looks while armed: a CPU quota's period (100 ms), so it adds few wakes. */
const STEP_MS = 100

/**
 * How late the event loop ran while a scoring request was outstanding: a timer armed with the
 * request, re-armed every STEP_MS, and how late each one fired (the largest, in ms). Armed only
 * while a request is outstanding, so a board that keeps up (requests of a few ms) almost never
 * sees it fire; read when the reply is handled, an overdue timer counts too, so a loop held by
 * the reply's own work is seen without waiting for the timer.
 */
export class LoopLateness {
  readonly #now: () => number
  #timer: NodeJS.Timeout | undefined
  #due = 0
  #latest = 0

  /** The loop's own clock, not the detector's (which may be the microphone's capture time). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now
  }

  /** A request went out: from now on, lateness is measured. */
  arm(): void {
    this.#latest = 0
    this.#schedule()
  }

  /** Its reply came: the largest lateness since `arm`, in ms (0 if never late). */
  disarm(): number {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
    this.#note()
    return this.#latest
  }

  #schedule(): void {
    this.#due = this.#now() + STEP_MS
    this.#timer = setTimeout(() => {
      this.#note()
      this.#schedule()
    }, STEP_MS)
    this.#timer.unref()
  }

  #note(): void {
    const late = this.#now() - this.#due
    if (late > this.#latest) this.#latest = late
  }
}
