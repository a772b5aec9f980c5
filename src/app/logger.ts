import { pino } from 'pino'
import type { Logger } from '../core/logger.js'

/**
 * Structured JSON lines to stdout, where journald keeps them. Transcripts and tool arguments live
 * under `pii` and secrets under their own names; all are redacted unless `NOCTURN_LOG_PII=1`.
 */
export function createLogger(
  opts: { level?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  const showPii = process.env.NOCTURN_LOG_PII === '1'
  const secrets = ['apiKey', '*.apiKey', 'password', '*.password', 'key', '*.key', 'mac', '*.mac']
  return pino(
    {
      level: opts.level ?? process.env.NOCTURN_LOG_LEVEL ?? 'info',
      base: { app: 'nocturn' },
      redact: { paths: showPii ? secrets : [...secrets, 'pii', '*.pii'], censor: '[redacted]' },
    },
    opts.destination ?? process.stdout,
  )
}
