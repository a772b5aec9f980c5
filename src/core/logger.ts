/**
 * The logger the core writes to: pino's shape (structured fields first, a static message second),
 * declared here so the core needs no logging package. Transcripts and tool arguments go under `pii`.
 */
export interface Logger {
  debug(fields: object, msg?: string): void
  info(fields: object, msg?: string): void
  warn(fields: object, msg?: string): void
  error(fields: object, msg?: string): void
  child(bindings: Record<string, unknown>): Logger
}

/** A logger that drops everything; for callers that have nothing to say. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger
  },
}
