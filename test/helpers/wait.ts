/**
 * Waiting in tests, written once (as MQTT.js keeps one TeardownHelper). For what happens in real
 * time — a broker round trip, a child's output, a browser — a test waits with these; a test on the
 * virtual clock moves it instead (`clock.advance`, `settle` in src/testing/virtual-clock.ts).
 *
 * - `until(cond, what, timeoutMs)`: polls every 10 ms until `cond()` holds; after `timeoutMs`
 *   (8 s: a loaded machine stretches every round trip) it throws `timed out waiting: <what>`, so
 *   a failure says what never happened. A bound for a hang, never a measurement.
 * - `sleep(ms)`: lets `ms` of real time pass (a test that checks nothing more arrives).
 * - `tick(ms)`: 30 ms by default, long enough for a loopback round trip to land.
 */
export async function until(
  cond: () => boolean,
  what = 'the condition',
  timeoutMs = 8000,
): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`)
    await sleep(10)
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export function tick(ms = 30): Promise<void> {
  return sleep(ms)
}
