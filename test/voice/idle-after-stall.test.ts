import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { type ExpiryReason, SessionTimers } from '../../src/voice/session-timers.js'

/** Holds this process's event loop for `ms`, as a slow disk or a long collection would. */
function stall(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // busy: nothing else in this process runs
  }
}

describe('idle timeout after the event loop was held up (real clock, real I/O)', () => {
  it('speech that arrived during the stall counts: the session does not end on a timer that ran before the I/O', async () => {
    const clock = realClock()
    const expired: { reason: ExpiryReason; at: number }[] = []
    const timers = new SessionTimers({
      clock,
      budgetMs: 60_000,
      idleMs: 300,
      playingMs: () => 0,
      onExpire: (reason) => expired.push({ reason, at: performance.now() }),
    })
    // Someone speaks 150 ms in, while this process is stuck: the words wait in a pipe, like the
    // microphone's frames wait in arecord's socket.
    const speaker = spawn('sh', ['-c', 'sleep 0.15; date +%s%3N'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    let heardAt = 0
    let spokenAt = 0 // when the child wrote, on the wall clock
    speaker.stdout.on('data', (c: Buffer) => {
      heardAt = performance.now()
      spokenAt = Number(c.toString().trim())
      timers.activity()
    })
    await new Promise((r) => speaker.once('spawn', r))
    timers.start()
    const stallEnd = await new Promise<number>((resolve) =>
      setTimeout(() => {
        // The idle timer falls due (300 ms) in here; the speech comes at about 150 ms.
        stall(1500)
        resolve(Date.now())
      }, 0),
    )
    await new Promise((r) => setTimeout(r, 100))
    // What this test is about: the words were waiting when the loop came back.
    if (!(spokenAt > 0 && spokenAt < stallEnd))
      throw new Error(`the child spoke at ${spokenAt}, not during the stall (ended ${stallEnd})`)
    expect(expired).toEqual([])
    // Quiet from then on: it still ends, idleMs after the speech was heard.
    for (let i = 0; i < 100 && expired.length === 0; i++)
      await new Promise((r) => setTimeout(r, 50))
    timers.stop()
    expect(expired.map((e) => e.reason)).toEqual(['idle'])
    expect(expired[0]!.at - heardAt).toBeGreaterThanOrEqual(299)
  })
})
