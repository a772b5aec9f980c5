/** Exponential backoff for restarting a device: base, 2×base, … up to max; reset after a healthy run. */
export interface BackoffOptions {
  readonly baseMs: number
  readonly maxMs: number
  /** A child that lived this long was healthy: the next failure starts again from `baseMs`. */
  readonly healthyMs: number
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 250, maxMs: 8000, healthyMs: 10_000 }

export class Backoff {
  readonly #o: BackoffOptions
  #attempt = 0

  constructor(options: BackoffOptions = DEFAULT_BACKOFF) {
    this.#o = options
  }

  /** The delay before the next restart, given how long the failed run lasted. */
  next(livedMs: number): number {
    if (livedMs >= this.#o.healthyMs) this.#attempt = 0
    const delay = Math.min(this.#o.maxMs, this.#o.baseMs * 2 ** this.#attempt)
    this.#attempt++
    return delay
  }
}
