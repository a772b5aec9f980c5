/**
 * How long to wait before the next try of something that keeps failing: a device restarted, a
 * broker reconnected, a helper process respawned, a provider connection reopened. One policy
 * type for all of them, so every site says its numbers as options and none grows its own formula.
 *
 * The n-th delay after a reset (n = 0, 1, …) is `initialMs · factor^n + stepMs · n`, capped at
 * `maxMs`, then spread by ±`jitter` (a fraction). Doubling is `factor: 2`; a linear schedule is
 * `factor: 1` with a `stepMs`.
 */
export interface BackoffPolicy {
  readonly initialMs: number
  readonly maxMs: number
  /** Growth per failure; 2 (doubling) when absent. */
  readonly factor?: number
  /** Added per failure; 0 when absent. */
  readonly stepMs?: number
  /**
   * Random spread as a fraction of the delay (0.25: ×0.75…×1.25), so a household's devices do
   * not all retry in the same instant after a shared outage. 0 when absent.
   */
  readonly jitter?: number
  /** A run that lasted this long was healthy: the next failure starts again from `initialMs`. */
  readonly healthyMs?: number
  /** After this many failures in a row the backoff is `exhausted`: give up. Never when absent. */
  readonly giveUpAfter?: number
}

/** The exponent stops growing here: 2^30 × any sane initial delay is already past every cap. */
const MAX_EXPONENT = 30

/** The policy's state: failures since the last reset. Pure: no timers, no clock. */
export class Backoff {
  readonly policy: BackoffPolicy
  readonly #random: () => number
  #failures = 0

  /** `random` in [0, 1) for the jitter; tests pass a fixed one. */
  constructor(policy: BackoffPolicy, random: () => number = Math.random) {
    this.policy = policy
    this.#random = random
  }

  /** Failures counted since the last reset (or the last healthy run). */
  get failures(): number {
    return this.#failures
  }

  /** The policy's `giveUpAfter` failures in a row have happened: there is no next try. */
  get exhausted(): boolean {
    const giveUpAfter = this.policy.giveUpAfter
    return giveUpAfter !== undefined && this.#failures >= giveUpAfter
  }

  /**
   * Counts one failure and returns the wait before the next try (see `exhausted` for whether
   * there is one). `livedMs`, when known, is how long the failed run lasted: a healthy one resets
   * the count first.
   */
  next(livedMs?: number): number {
    const healthyMs = this.policy.healthyMs
    if (livedMs !== undefined && healthyMs !== undefined && livedMs >= healthyMs) this.reset()
    const delay = this.peek()
    this.#failures++
    const jitter = this.policy.jitter ?? 0
    return jitter === 0 ? delay : Math.round(delay * (1 - jitter + 2 * jitter * this.#random()))
  }

  /** The wait the next failure would get, without jitter and without counting it. */
  peek(): number {
    const p = this.policy
    const n = this.#failures
    const grown = p.initialMs * (p.factor ?? 2) ** Math.min(n, MAX_EXPONENT) + (p.stepMs ?? 0) * n
    return Math.min(p.maxMs, grown)
  }

  /** Success (a connection made, a frame heard, a healthy run): the next failure starts afresh. */
  reset(): void {
    this.#failures = 0
  }
}
