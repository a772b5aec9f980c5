/**
 * Clock: the time source and timers every timing decision goes through, so tests can run on a
 * virtual clock and production on the real one. Times are milliseconds since the epoch.
 */
export interface Clock {
  now(): number
  /** Calls `fn` once after `ms`; the handle cancels it. */
  setTimeout(fn: () => void, ms: number): TimerHandle
  clearTimeout(handle: TimerHandle): void
}

export interface TimerHandle {
  readonly id: number
}
