/** The recent measurements a window is made of; older ones are forgotten. */
const SAMPLES = 16
/** A claim crossing the broker must take at most a quarter of the window (docs/protocol.md). */
const HOPS_PER_WINDOW = 4
/**
 * Until two speakers' claims of one round have been seen, their detectors are taken to fire up to
 * one 80 ms scoring chunk apart (the chunks of two speakers do not line up).
 */
const ASSUMED_SPREAD_MS = 80
/**
 * Never shorter by default: one scoring chunk. A speaker whose detector fires more than half the
 * window after the opener's yields without claiming, so the opener never learns of it; a window
 * measured down to a few ms (30 was tried: bench/RESULTS.md) then shuts out the speaker whose chunk
 * ended later, however much better it heard the words.
 */
const MIN_WINDOW_MS = 80

/**
 * The claim window, measured rather than fixed. Two things must fit in it: a claim crossing the
 * broker, four times over (`hop`: this speaker's subscriptions answered and its own claims handed
 * back, the largest of the recent ones), and the spread between the speakers' detectors on the
 * same words, twice with a hop (a speaker joins a round only in its first half): the largest of
 * the recent rounds' spreads this speaker saw. Capped by the configured window.
 */
export class ClaimWindow {
  readonly #maxMs: number
  readonly #minMs: number
  readonly #hops: number[] = []
  readonly #spreads: number[] = []

  /** Measured between `minMs` and `maxMs`; equal bounds fix it. */
  constructor(maxMs: number, minMs = MIN_WINDOW_MS) {
    this.#maxMs = maxMs
    this.#minMs = Math.min(minMs, maxMs)
  }

  /** A round trip to the broker and back, ms. */
  hop(ms: number): void {
    remember(this.#hops, ms)
  }

  /** How long after a round opened another claim of it was heard (or this speaker woke), ms. */
  spread(ms: number): void {
    remember(this.#spreads, ms)
  }

  /** The window, ms: the configured one until a hop has been measured. */
  get ms(): number {
    if (this.#hops.length === 0) return this.#maxMs
    const hop = Math.max(...this.#hops)
    const spread = this.#spreads.length > 0 ? Math.max(...this.#spreads) : ASSUMED_SPREAD_MS
    const want = Math.max(HOPS_PER_WINDOW * hop, 2 * (spread + hop), this.#minMs)
    return Math.min(this.#maxMs, Math.ceil(want))
  }
}

function remember(xs: number[], ms: number): void {
  if (!(ms >= 0 && Number.isFinite(ms))) return
  xs.push(ms)
  if (xs.length > SAMPLES) xs.shift()
}
