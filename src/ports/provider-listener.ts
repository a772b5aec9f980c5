import type { ProviderFailure } from '../voice/provider-failure.js'

/**
 * Told of every attempt to open a provider's session, as it happens (the failover in front of
 * the providers tells it; it never decides anything): the status, the LED, the phone, Home
 * Assistant and the room's spoken "why" listen, registered once in compose/.
 */
export interface ProviderListener {
  /** A session opened on this provider, first choice or after failing over. */
  reached(provider: string): void
  /** This provider could not be reached; the next one, if any, is tried now. */
  failed(failure: ProviderFailure): void
  /** No configured provider could be reached for this attempt: each one's failure, in order. */
  unreachable(failures: readonly ProviderFailure[]): void
}
