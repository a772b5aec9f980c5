import type {
  LiveCapabilities,
  LiveEvents,
  LiveLLM,
  LiveSession,
  LiveSetup,
} from '../ports/live-llm.js'
import type { ProviderOrder } from './provider-order.js'

/**
 * The live providers behind one `LiveLLM`, tried in order of preference (docs/voice-driver.md,
 * "Failover"). A voice session opens through `session()`, which stays on the provider its first
 * connection opened on: resumptions and fresh reconnections never switch provider mid-session.
 */
export class FailoverLive implements LiveLLM {
  readonly #providers: readonly LiveLLM[]
  readonly #order: ProviderOrder

  /** `providers[i]` is the provider `order.names[i]` names. */
  constructor(providers: readonly LiveLLM[], order: ProviderOrder) {
    if (providers.length !== order.names.length) throw new Error('one live model per provider')
    this.#providers = providers
    this.#order = order
  }

  /** The capabilities of the provider the next session tries first. */
  get capabilities(): LiveCapabilities {
    return this.#first().capabilities
  }

  /** One connection, on the first provider that can be reached. */
  async open(setup: LiveSetup, events: LiveEvents): Promise<LiveSession> {
    return (await this.choose(setup, events)).session
  }

  session(): LiveLLM {
    return new SessionLive(this)
  }

  /**
   * Opens on the first provider that can be reached, each told whether its tools may be
   * non-blocking by its own model's capabilities (a voice session declares them non-blocking
   * exactly where the model can: ConnectionKeeper).
   */
  async choose(
    setup: LiveSetup,
    events: LiveEvents,
    only?: number,
  ): Promise<{ session: LiveSession; index: number }> {
    const { value, index } = await this.#order.attempt(async (i) => {
      const live = this.#providers[i] as LiveLLM
      const held = heldUntilOpen(events)
      try {
        const session = await live.open(
          { ...setup, nonBlockingTools: live.capabilities.asyncToolCalls },
          held.events,
        )
        held.open()
        return session
      } catch (err) {
        held.drop()
        throw err
      }
    }, only)
    return { session: value, index }
  }

  provider(index: number): LiveLLM {
    return this.#providers[index] as LiveLLM
  }

  #first(): LiveLLM {
    return this.#providers[this.#order.candidates()[0] ?? 0] as LiveLLM
  }
}

/**
 * One voice session's provider: chosen by the first connection that opens, kept for every later
 * one. Its capabilities are those of the provider the session runs on once it runs.
 */
class SessionLive implements LiveLLM {
  readonly #failover: FailoverLive
  #pinned: number | undefined

  constructor(failover: FailoverLive) {
    this.#failover = failover
  }

  get capabilities(): LiveCapabilities {
    return this.#pinned === undefined
      ? this.#failover.capabilities
      : this.#failover.provider(this.#pinned).capabilities
  }

  /**
   * A reconnection tries the session's own provider only, but is told like any attempt: a
   * connection lost mid-session to a provider now unreachable is a failure the room hears of.
   */
  async open(setup: LiveSetup, events: LiveEvents): Promise<LiveSession> {
    const { session, index } = await this.#failover.choose(setup, events, this.#pinned)
    this.#pinned = index
    return session
  }
}

/**
 * The events of one attempt, held until it opens and dropped if it fails: a provider that reports
 * anything (a `closed`) for a connection it then refuses must not make the session think a live
 * connection was lost — the next provider is being tried instead.
 */
function heldUntilOpen(events: LiveEvents): {
  events: LiveEvents
  open(): void
  drop(): void
} {
  let state: 'opening' | 'open' | 'dropped' = 'opening'
  const held: (() => void)[] = []
  const guarded = new Proxy(events, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        const deliver = () => (value as (...a: unknown[]) => void).apply(target, args)
        if (state === 'open') deliver()
        else if (state === 'opening') held.push(deliver)
      }
    },
  })
  return {
    events: guarded,
    open() {
      state = 'open'
      for (const deliver of held.splice(0)) deliver()
    },
    drop() {
      state = 'dropped'
      held.length = 0
    },
  }
}
