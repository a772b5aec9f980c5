/**
 * Clock: the time source and timers every timing decision goes through, so tests can run on a
 * virtual clock and production on the real one. Times are milliseconds since the epoch.
 */
export interface Clock {
  now(): number
  /**
   * Milliseconds from an arbitrary origin that never go back, whatever happens to the wall clock
   * (NTP, a user setting the time). For measuring durations, such as how much audio has played.
   * Optional so that existing clocks stay valid; `monotonicNow` falls back to `now()`.
   */
  monotonic?(): number
  /** Calls `fn` once after `ms`; the handle cancels it. */
  setTimeout(fn: () => void, ms: number): TimerHandle
  clearTimeout(handle: TimerHandle): void
}

export interface TimerHandle {
  readonly id: number
}

/** The clock's monotonic reading when it has one, else its wall time. */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now()
}
