/**
 * Why a provider could not be reached, in the few kinds a household can act on: each is a
 * sentence the room hears and a word the status, the LED, the phone and Home Assistant show.
 */
export type UnreachableReason =
  | 'offline'
  | 'timeout'
  | 'key_refused'
  | 'quota'
  | 'refused'
  | 'service_error'

/** One provider's failure to open a session: which provider, the kind, and what it said. */
export interface ProviderFailure {
  /** The provider's kind as configured (`gemini`, `openai`). */
  readonly provider: string
  readonly reason: UnreachableReason
  /** The error's own words, for logs and the phone (never a key). */
  readonly detail: string
}

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
