import { isNocturnError } from '../core/errors.js'
import type { UnreachableReason } from '../ports/provider-listener.js'

/** The kind of a `LiveLLM.open` rejection, read from its error code. */
export function unreachableReason(err: unknown): UnreachableReason {
  if (!isNocturnError(err)) return 'offline'
  switch (err.code) {
    case 'NOC_ERR_LIVE_CONNECT_TIMEOUT':
      return 'timeout'
    case 'NOC_ERR_PROVIDER_NO_KEY':
    case 'NOC_ERR_LIVE_KEY_REFUSED':
      return 'key_refused'
    case 'NOC_ERR_LIVE_QUOTA':
      return 'quota'
    case 'NOC_ERR_LIVE_SERVER_ERROR':
      return 'service_error'
    case 'NOC_ERR_LIVE_REJECTED':
    case 'NOC_ERR_LIVE_UNKNOWN_MODEL':
      return 'refused'
    default:
      return 'offline'
  }
}
