import type { NewMessage } from '../core/conversation.js'
import type { Clock, TimerHandle } from '../ports/clock.js'

/**
 * A reply that began before the words that led to it were known (a provider that transcribes the
 * person asynchronously, docs/openai.md): what the chat would get meanwhile — the reply's tool
 * calls, their outcomes, the reply itself — is kept back, in order, so the words can go first.
 * Bounded: words that never come must not hold the chat, so after `boundMs` it is let go as is.
 * Only the record waits; the calls themselves run at once.
 */
export class ReplyHold {
  readonly #clock: Clock
  readonly #boundMs: number
  readonly #expired: () => void
  #kept: NewMessage[] = []
  #timer: TimerHandle | undefined

  constructor(clock: Clock, boundMs: number, expired: () => void) {
    this.#clock = clock
    this.#boundMs = boundMs
    this.#expired = expired
  }

  get holding(): boolean {
    return this.#timer !== undefined
  }

  /** The reply began without its words: hold from now, at most `boundMs`. */
  start(): void {
    this.#stopTimer()
    // Still holding when `expired` runs: it releases what was kept.
    this.#timer = this.#clock.setTimeout(() => this.#expired(), this.#boundMs)
  }

  keep(message: NewMessage): void {
    this.#kept.push(message)
  }

  /** Ends the hold: what was kept, in order, to write now. */
  release(): NewMessage[] {
    this.#stopTimer()
    const kept = this.#kept
    this.#kept = []
    return kept
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
