import { NocturnError } from '../../core/errors.js'

/**
 * Why the service would not open a session — an HTTP status on the WebSocket upgrade, or an error
 * event before the session was set up — as an error a person can act on.
 */
export function refusal(
  model: string,
  how: { status: number; body?: string } | { code: string; message: string },
): NocturnError {
  if ('code' in how) {
    if (/model_not_found|invalid_model/.test(how.code)) return unknownModel(model, how.message)
    if (/invalid_api_key/.test(how.code)) {
      return new NocturnError(
        'NOC_ERR_LIVE_KEY_REFUSED',
        `the OpenAI key was refused: ${how.message}`,
      )
    }
    if (/insufficient_quota|rate_limit/.test(how.code)) {
      return new NocturnError(
        'NOC_ERR_LIVE_QUOTA',
        `the account's quota or rate limit is spent (${how.code}): ${how.message}`,
      )
    }
    return new NocturnError(
      'NOC_ERR_LIVE_REJECTED',
      `the realtime service refused the session setup (${how.code}): ${how.message}`,
    )
  }
  const said = how.body ? `: ${errorMessage(how.body)}` : ''
  switch (how.status) {
    case 401:
      return new NocturnError('NOC_ERR_LIVE_KEY_REFUSED', `the OpenAI key was refused (401)${said}`)
    case 403:
      return new NocturnError(
        'NOC_ERR_LIVE_KEY_REFUSED',
        `this key may not use the realtime model "${model}" here (403)${said}`,
      )
    case 404:
      return unknownModel(model, said)
    case 429:
      return new NocturnError(
        'NOC_ERR_LIVE_QUOTA',
        `the account's quota or rate limit is spent (429)${said}`,
      )
    default:
      return new NocturnError(
        how.status >= 500 ? 'NOC_ERR_LIVE_SERVER_ERROR' : 'NOC_ERR_LIVE_REJECTED',
        `the realtime service answered ${how.status} to the connection${said}`,
      )
  }
}

function unknownModel(model: string, said: string): NocturnError {
  return new NocturnError(
    'NOC_ERR_LIVE_UNKNOWN_MODEL',
    `the realtime model "${model}" does not exist for this account${said ? ` (${said.replace(/^: /, '')})` : ''}; ` +
      'run `nocturn doctor` to list the models this key can use',
  )
}

/** The service's `{"error":{"message":…}}` body, or the start of whatever came. */
function errorMessage(body: string): string {
  try {
    const m = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message
    if (typeof m === 'string') return m.slice(0, 200)
  } catch {}
  return body.slice(0, 200)
}
