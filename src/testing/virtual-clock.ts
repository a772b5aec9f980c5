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
  #wallOffset: number // now() = #wallOffset + #mono
  #mono = 0
  #nextId = 1
  #timers: Pending[] = []

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#wallOffset = startMs
  }

  now(): number {
    return this.#wallOffset + this.#mono
  }

  /** Moves with `advance` only; `stepWall` leaves it alone. */
  monotonic(): number {
    return this.#mono
  }

  /**
   * Steps the wall clock (`now()`) by `ms`, forward or back, as NTP or a user setting the time
   * would: timers and the monotonic reading are not affected.
   */
  stepWall(ms: number): void {
    this.#wallOffset += ms
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const t = { id: this.#nextId++, at: this.#mono + Math.max(0, ms), fn }
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
    const end = this.#mono + ms
    for (;;) {
      await settle()
      const next = this.#timers
        .filter((t) => t.at <= end)
        .sort((a, b) => a.at - b.at || a.id - b.id)[0]
      if (!next) break
      this.#timers = this.#timers.filter((t) => t !== next)
      this.#mono = next.at
      next.fn()
    }
    this.#mono = end
    await settle()
  }
}

/** Lets queued promise callbacks run (a few macrotask turns, for chains of awaits). */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r))
}
