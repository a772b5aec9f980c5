import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { LiveSession, LiveToolResponse } from '../ports/live-llm.js'
import type { LiveCall } from './call-registry.js'

/** An answer waiting for a connection, and the lineage that may carry it. */
interface Outgoing {
  readonly lineage: number
  readonly response: LiveToolResponse
}

/** A connection as far as answers are concerned. */
interface Carrier {
  readonly lineage: number
  readonly session?: LiveSession
}

export interface AnswerOutboxDeps {
  readonly log: Logger
  /** The open, current connection, if there is one. */
  live(): Carrier | undefined
  /** The current lineage: the one a resumption would continue. */
  lineage(): number
}

/**
 * Tool answers on their way to the model (DESIGN §2.10): only ever sent on a connection of the
 * lineage that issued the call. Answers finished in a gap are kept and sent right after the
 * resumption; they are dropped when the lineage cannot be resumed.
 */
export class AnswerOutbox {
  readonly #d: AnswerOutboxDeps
  #queued: Outgoing[] = []

  constructor(deps: AnswerOutboxDeps) {
    this.#d = deps
  }

  get size(): number {
    return this.#queued.length
  }

  send(call: LiveCall, response: LiveToolResponse): void {
    const o: Outgoing = { lineage: call.lineage, response }
    const c = this.#d.live()
    if (c && c.lineage === call.lineage) {
      this.#respond(c, o)
      return
    }
    if (call.lineage === this.#d.lineage()) {
      // Between connections: delivered when this lineage resumes, dropped if it cannot.
      this.#d.log.info({ callId: call.id }, 'voice answer queued until the connection resumes')
      this.#queued.push(o)
      return
    }
    this.#d.log.warn({ callId: call.id }, 'voice answer for a lost connection dropped')
  }

  /** A connection opened: what is queued for its lineage goes out; anything else is dropped. */
  deliver(conn: Carrier): void {
    const out = this.#queued
    this.#queued = []
    for (const o of out) {
      if (o.lineage !== conn.lineage) continue
      this.#d.log.info(
        { callId: o.response.id, willContinue: o.response.willContinue === true },
        'voice queued answer delivered after resumption',
      )
      this.#respond(conn, o)
    }
  }

  /** Removes the queued answers to these calls; returns how many were removed. */
  remove(ids: ReadonlySet<string>): number {
    const before = this.#queued.length
    this.#queued = this.#queued.filter((o) => !ids.has(o.response.id))
    return before - this.#queued.length
  }

  clear(): void {
    this.#queued = []
  }

  #respond(conn: Carrier, o: Outgoing): void {
    try {
      conn.session?.respond(o.response)
    } catch (err) {
      // The socket died under us; keep the answer for the connection that resumes this one.
      this.#d.log.warn(
        { callId: o.response.id, err: errorText(err) },
        'voice respond failed: queued',
      )
      this.#queued.push(o)
    }
  }
}
