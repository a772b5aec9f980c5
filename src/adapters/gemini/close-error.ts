import { NocturnError } from '../../core/errors.js'

/**
 * The live service reports errors as a WebSocket close code and a reason cut to 123 bytes; this
 * turns one that ends a connection before its setup completed into an error a person can act on.
 */
export function closeError(code: number, reason: string, model: string): NocturnError {
  const said = reason ? `: "${reason}"` : ''
  if (code === 1008 && /not found|not supported for bidiGenerateContent/i.test(reason)) {
    return new NocturnError(
      'NOC_ERR_LIVE_UNKNOWN_MODEL',
      `the live model "${model}" does not exist for this account or is not a live model${said}; ` +
        'run `nocturn doctor` to list the live models this key can use',
    )
  }
  if (code === 1008 && /API key not valid|API_KEY_INVALID|permission denied/i.test(reason)) {
    return new NocturnError('NOC_ERR_LIVE_KEY_REFUSED', `the Gemini key was refused${said}`)
  }
  // A spent quota closes the socket (1008 or 1011) with RESOURCE_EXHAUSTED's words in the reason.
  if (/quota|RESOURCE_EXHAUSTED|rate limit/i.test(reason)) {
    return new NocturnError(
      'NOC_ERR_LIVE_QUOTA',
      `the account's quota or rate limit is spent (close ${code})${said}`,
    )
  }
  if (code === 1007 || code === 1008) {
    return new NocturnError(
      'NOC_ERR_LIVE_REJECTED',
      `the live service refused the session setup (close ${code})${said}`,
    )
  }
  if (code === 1011) {
    return new NocturnError(
      'NOC_ERR_LIVE_SERVER_ERROR',
      `the live service had an internal error (close 1011)${said}; try again`,
    )
  }
  return new NocturnError(
    'NOC_ERR_LIVE_CLOSED',
    `the live connection closed before its setup completed (close ${code})${said}`,
  )
}
