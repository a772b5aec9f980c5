/**
 * Errors that cross a boundary (the store, the broker, a tool result the model reads) carry a
 * string `code`, because `instanceof` does not survive JSON. Every code is listed in docs/errors.md.
 */
export const ERROR_CODES = [
  'NOC_ERR_UNKNOWN_TOOL',
  'NOC_ERR_INVALID_ARGS',
  'NOC_ERR_ARGS_TOO_LARGE',
  'NOC_ERR_TOOL_FAILED',
  'NOC_ERR_DENIED_BY_POLICY',
  'NOC_ERR_DENIED_BY_HUMAN',
  'NOC_ERR_APPROVAL_TIMEOUT',
  'NOC_ERR_APPROVER_UNREACHABLE',
  'NOC_ERR_APPROVAL_UNCLEAR',
  'NOC_ERR_BROKER_REFUSED',
  'NOC_ERR_BROKER_UNREACHABLE',
  'NOC_ERR_CANCELLED',
  'NOC_ERR_NO_GATE',
  'NOC_ERR_STORE_NOT_DATABASE',
  'NOC_ERR_STORE_READ_ONLY',
  'NOC_ERR_STORE_TOO_NEW',
  'NOC_ERR_STORE_DAMAGED',
  'NOC_ERR_STORE_UNWRITABLE',
  'NOC_ERR_STORE_UNKNOWN_CONVERSATION',
  'NOC_ERR_GRANT_REFUSED',
  'NOC_ERR_OWNER_REFUSED',
  'NOC_ERR_BAD_REQUEST',
  'NOC_ERR_NOT_FOUND',
  'NOC_ERR_CONVERSATION_LIVE',
  'NOC_ERR_LIVE_CONNECT_TIMEOUT',
  'NOC_ERR_LIVE_UNKNOWN_MODEL',
  'NOC_ERR_LIVE_REJECTED',
  'NOC_ERR_LIVE_KEY_REFUSED',
  'NOC_ERR_LIVE_QUOTA',
  'NOC_ERR_LIVE_SERVER_ERROR',
  'NOC_ERR_LIVE_CLOSED',
  'NOC_ERR_PROVIDER_NO_KEY',
  'NOC_ERR_AUDIO_DEVICE_UNKNOWN',
  'NOC_ERR_AUDIO_DEVICE_FAILED',
  'NOC_ERR_AUDIO_STALLED',
  'NOC_ERR_AUDIO_BACKEND_UNAVAILABLE',
  'NOC_ERR_WAV_FORMAT',
  'NOC_ERR_WAV_TRUNCATED',
  'NOC_ERR_WAKE_RUNTIME',
  'NOC_ERR_WAKE_MODEL_MISSING',
  'NOC_ERR_WAKE_MODEL_INVALID',
  'NOC_ERR_WAKE_MODEL_SHAPE',
  'NOC_ERR_INTERNAL',
  'NOC_ERR_SPEECH_FAILED',
  'NOC_ERR_HOME_UNREACHABLE',
  'NOC_ERR_HOME_UNAUTHORIZED',
  'NOC_ERR_HOME_FAILED',
  'NOC_ERR_HOME_CHANGED',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

const KNOWN = new Set<string>(ERROR_CODES)

export class NocturnError extends Error {
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'NocturnError'
    this.code = code
  }
}

/**
 * Only Nocturn's own errors cross a boundary with their code and message. A system error also has
 * a string `code` (ENOENT, ECONNREFUSED) and a message that may hold a path: it is not one of ours.
 */
export function isNocturnError(value: unknown): value is NocturnError {
  if (value instanceof NocturnError) return true
  // Another copy of this module (a worker, a second bundle) makes instanceof fail: match by shape.
  return (
    value instanceof Error &&
    value.name === 'NocturnError' &&
    KNOWN.has(String((value as { code?: unknown }).code))
  )
}

/**
 * The one way a thrown value becomes text (a log field, a line on stderr, a wrapped message): an
 * Error's message without its class name, anything else as a string. Adapters that may see a
 * secret in a vendor's message pass the result through their redaction.
 */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
