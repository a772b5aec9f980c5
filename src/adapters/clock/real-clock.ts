import { performance } from 'node:perf_hooks'
import type { Clock, TimerHandle } from '../../ports/clock.js'

/** The wall clock, a monotonic clock for durations, and Node's timers. */
export function realClock(): Clock {
  const timers = new Map<number, NodeJS.Timeout>()
  let nextId = 1
  return {
    now: () => Date.now(),
    monotonic: () => performance.now(),
    setTimeout(fn, ms) {
      const id = nextId++
      const t = setTimeout(() => {
        timers.delete(id)
        fn()
      }, ms)
      timers.set(id, t)
      return { id } satisfies TimerHandle
    },
    clearTimeout(handle) {
      const t = timers.get(handle.id)
      if (t) clearTimeout(t)
      timers.delete(handle.id)
    },
  }
}
