import { Backoff, type BackoffPolicy } from '../core/backoff.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { type Clock, monotonicNow } from '../ports/clock.js'
import type { ProviderFailure, ProviderListener } from '../ports/provider-listener.js'
import { unreachableReason } from './provider-failure.js'

/**
 * A provider that failed rests 30 s before it is tried first again, then 1, 2, 4 … minutes while
 * it keeps failing, at most 10: long enough that a wake does not spend seconds on a provider known
 * to be down, short enough that a preferred provider that came back is used again soon.
 */
const PROVIDER_REST: BackoffPolicy = { initialMs: 30_000, factor: 2, maxMs: 600_000 }

export interface ProviderOrderDeps {
  /** Each configured provider's name (its kind), in order of preference. */
  readonly names: readonly string[]
  readonly clock: Clock
  readonly log: Logger
  /** Told of every attempt to open a session (the status, the LED, the room's "why"). */
  readonly listener: ProviderListener
  readonly rest?: BackoffPolicy
}

interface Standing {
  readonly backoff: Backoff
  /** Monotonic ms until which the provider is skipped; 0: not resting. */
  restsUntil: number
}

/** One provider's model that answered, and which provider it was. */
interface Answered<T> {
  readonly value: T
  readonly index: number
}

/**
 * The configured providers' order of preference and what each one's last attempt taught: the
 * failover's memory (docs/voice-driver.md, "Failover"). It decides which provider is tried, in
 * which order; the callers (the live failover, the typed chat, speech) make the attempts.
 */
export class ProviderOrder {
  readonly #deps: ProviderOrderDeps
  readonly #standing: Standing[]

  constructor(deps: ProviderOrderDeps) {
    if (deps.names.length === 0) throw new Error('failover needs at least one provider')
    this.#deps = deps
    this.#standing = deps.names.map(() => ({
      backoff: new Backoff(deps.rest ?? PROVIDER_REST),
      restsUntil: 0,
    }))
  }

  get names(): readonly string[] {
    return this.#deps.names
  }

  /**
   * The providers to try now, in order: those not resting after a failure. When every one is
   * resting, all of them: a wake is worth an attempt, and nothing else could answer it anyway.
   */
  candidates(): number[] {
    const now = monotonicNow(this.#deps.clock)
    const awake = this.#standing.flatMap((s, i) => (s.restsUntil <= now ? [i] : []))
    return awake.length > 0 ? awake : this.#standing.map((_, i) => i)
  }

  /**
   * Tries the candidates in order until one answers (or `only` that one: a session's own provider
   * when it reconnects); every attempt is told to the listener and a provider that fails rests.
   * Rejects with the last failure's error when none answers.
   */
  async attempt<T>(tryOne: (index: number) => Promise<T>, only?: number): Promise<Answered<T>> {
    const failures: ProviderFailure[] = []
    let last: unknown
    for (const index of only === undefined ? this.candidates() : [only]) {
      try {
        const value = await tryOne(index)
        this.#reached(index, failures.length)
        return { value, index }
      } catch (err) {
        last = err
        failures.push(this.#failed(index, err))
      }
    }
    this.#deps.log.error(
      {
        event: 'provider_unreachable',
        failures: failures.map((f) => `${f.provider}: ${f.reason}`),
      },
      'no provider could be reached',
    )
    this.#deps.listener.unreachable(failures)
    throw last
  }

  /**
   * Tries the candidates in order without telling or teaching anything (typed chats, speech): a
   * provider's health is what opening a session learns. `retry(err)` false stops at that error.
   */
  async quietly<T>(tryOne: (index: number) => Promise<T>, retry: () => boolean): Promise<T> {
    let last: unknown
    for (const index of this.candidates()) {
      try {
        return await tryOne(index)
      } catch (err) {
        last = err
        if (!retry()) break
        this.#deps.log.warn(
          { event: 'provider_skipped', provider: this.names[index], err: errorText(err) },
          'provider failed: trying the next',
        )
      }
    }
    throw last
  }

  #reached(index: number, failedBefore: number): void {
    const s = this.#standing[index] as Standing
    s.backoff.reset()
    s.restsUntil = 0
    const provider = this.names[index] as string
    this.#deps.log.info(
      { event: 'provider_chosen', provider, preference: index + 1, failedBefore },
      failedBefore > 0 ? 'provider reached after failing over' : 'provider reached',
    )
    this.#deps.listener.reached(provider)
  }

  #failed(index: number, err: unknown): ProviderFailure {
    const s = this.#standing[index] as Standing
    const restMs = s.backoff.next()
    s.restsUntil = monotonicNow(this.#deps.clock) + restMs
    const failure: ProviderFailure = {
      provider: this.names[index] as string,
      reason: unreachableReason(err),
      detail: errorText(err),
    }
    this.#deps.log.warn(
      { event: 'provider_failed', ...failure, preference: index + 1, restMs },
      'provider could not be reached',
    )
    this.#deps.listener.failed(failure)
    return failure
  }
}
