import { isNocturnError } from '../core/errors.js'

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

/** The kind of a `LiveLLM.open` rejection, read from its error code. */
export function unreachableReason(err: unknown): UnreachableReason {
  if (!isNocturnError(err)) return 'offline'
  switch (err.code) {
    case 'NOC_ERR_LIVE_CONNECT_TIMEOUT':
      return 'timeout'
    case 'NOC_ERR_PROVIDER_NO_KEY':
      return 'key_refused'
    case 'NOC_ERR_LIVE_SERVER_ERROR':
      return 'service_error'
    case 'NOC_ERR_LIVE_REJECTED':
    case 'NOC_ERR_LIVE_UNKNOWN_MODEL':
      return 'refused'
    default:
      return 'offline'
  }
}
