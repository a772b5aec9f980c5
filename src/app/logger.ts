import { type Logger as Pino, pino } from 'pino'
import type { Logger } from '../core/logger.js'

/**
 * Structured JSON lines to stdout, where journald keeps them. Transcripts and tool arguments live
 * under `pii` and secrets under their own names; all are redacted unless `NOCTURN_LOG_PII=1`.
 */
export function createLogger(
  opts: { level?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  const showPii = process.env.NOCTURN_LOG_PII === '1'
  const secrets = [
    'apiKey',
    '*.apiKey',
    'password',
    '*.password',
    'key',
    '*.key',
    'mac',
    '*.mac',
    'token',
    '*.token',
  ]
  return distinctBindings(
    pino(
      {
        level: opts.level ?? process.env.NOCTURN_LOG_LEVEL ?? 'info',
        base: { app: 'nocturn' },
        redact: { paths: showPii ? secrets : [...secrets, 'pii', '*.pii'], censor: '[redacted]' },
      },
      opts.destination ?? process.stdout,
    ),
    {},
  )
}

/**
 * Pino writes a child's bindings after its parent's, so a key bound twice (the appliance's
 * `component: "mqtt"`, then the approver's `component: "mqtt-approver"`) appears twice in one JSON
 * line. Here every child is made from the root with the bindings merged: the innermost wins.
 */
function distinctBindings(root: Pino, bindings: Record<string, unknown>): Logger {
  const l = Object.keys(bindings).length === 0 ? root : root.child(bindings)
  return {
    debug: (f, m) => l.debug(f, m),
    info: (f, m) => l.info(f, m),
    warn: (f, m) => l.warn(f, m),
    error: (f, m) => l.error(f, m),
    child: (b) => distinctBindings(root, { ...bindings, ...b }),
  }
}
