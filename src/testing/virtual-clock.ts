import type { Clock, TimerHandle } from '../ports/clock.js'

interface Pending {
  readonly id: number
  readonly at: number
  readonly fn: () => void
}

/**
 * A clock that moves only when told to, so timing rules are tested exactly: `advance(ms)` fires
 * every timer due on the way, in order, letting promises settle between them.
 */
export class VirtualClock implements Clock {
  #now: number
  #nextId = 1
  #timers: Pending[] = []

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs
  }

  now(): number {
    return this.#now
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const t = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn }
    this.#timers.push(t)
    return { id: t.id }
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle.id)
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.#timers.length
  }

  /** Moves time forward by `ms`, firing due timers in order and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms
    for (;;) {
      await settle()
      const next = this.#timers
        .filter((t) => t.at <= end)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0]
      if (!next) break
      this.#timers = this.#timers.filter((t) => t !== next)
      this.#now = next.at
      next.fn()
    }
    this.#now = end
    await settle()
  }
}

/** Lets queued promise callbacks run (a few macrotask turns, for chains of awaits). */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r))
}
