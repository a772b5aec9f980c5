import type { Logger } from '../core/logger.js'

export interface LogRecord {
  readonly level: 'debug' | 'info' | 'warn' | 'error'
  readonly msg: string
  /** The record's fields merged with every binding of the child loggers that wrote it. */
  readonly fields: Readonly<Record<string, unknown>>
}

/** A Logger that keeps every record, so tests can assert on the decisions a component logged. */
export class MemoryLogger implements Logger {
  readonly records: LogRecord[]
  readonly #bindings: Record<string, unknown>

  constructor(records: LogRecord[] = [], bindings: Record<string, unknown> = {}) {
    this.records = records
    this.#bindings = bindings
  }

  debug(fields: object, msg = ''): void {
    this.#push('debug', fields, msg)
  }
  info(fields: object, msg = ''): void {
    this.#push('info', fields, msg)
  }
  warn(fields: object, msg = ''): void {
    this.#push('warn', fields, msg)
  }
  error(fields: object, msg = ''): void {
    this.#push('error', fields, msg)
  }

  child(bindings: Record<string, unknown>): Logger {
    return new MemoryLogger(this.records, { ...this.#bindings, ...bindings })
  }

  /** Records whose structured `event` field is `event`: tests assert on that, never on message text. */
  withEvent(event: string): LogRecord[] {
    return this.records.filter((r) => r.fields.event === event)
  }

  #push(level: LogRecord['level'], fields: object, msg: string): void {
    this.records.push({ level, msg, fields: { ...this.#bindings, ...fields } })
  }
}
