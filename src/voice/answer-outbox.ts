import type { LiveToolResponse } from '../ports/live-llm.js'

/** An answer waiting for a connection, and the lineage that may carry it. */
export interface Outgoing {
  readonly lineage: number
  readonly response: LiveToolResponse
}

/**
 * Tool answers finished while no connection of their lineage was open (DESIGN §2.10): sent right
 * after the resumption, dropped when the lineage cannot be resumed. Only ever sent on a connection
 * of the lineage that issued the call.
 */
export class AnswerOutbox {
  #queued: Outgoing[] = []

  get size(): number {
    return this.#queued.length
  }

  push(o: Outgoing): void {
    this.#queued.push(o)
  }

  /** Removes the answers to these calls; returns how many were removed. */
  remove(ids: ReadonlySet<string>): number {
    const before = this.#queued.length
    this.#queued = this.#queued.filter((o) => !ids.has(o.response.id))
    return before - this.#queued.length
  }

  /** Everything queued, oldest first; the outbox is emptied (a failed send may queue it again). */
  take(): Outgoing[] {
    const out = this.#queued
    this.#queued = []
    return out
  }

  clear(): void {
    this.#queued = []
  }
}
