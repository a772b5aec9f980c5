import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { Watchdog } from '../../src/app/watchdog.js'

const ROOT = new URL('../..', import.meta.url).pathname

describe('the watchdog', () => {
  it('kills a process whose event loop is stuck, saying so on stderr', () => {
    const script = `
      import { Watchdog } from './src/app/watchdog.ts'
      new Watchdog({ loopLimitMs: 300, intervalMs: 50 })
      await new Promise((r) => setTimeout(r, 300)) // the app runs a while…
      const end = Date.now() + 5000
      while (Date.now() < end) {} // a stuck loop
      console.log('survived')
    `
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 15_000,
      },
    )
    expect(r.signal).toBe('SIGKILL')
    expect(r.stdout).not.toContain('survived')
    expect(r.stderr).toMatch(/"event":"watchdog_stalled","watchdog":"event loop"/)
  })

  it('never keeps a process alive by itself: one whose work is done exits though not stopped', () => {
    const script = `
      import { Watchdog } from './src/app/watchdog.ts'
      new Watchdog({ loopLimitMs: 15_000, onStall: () => {} })
      console.log('started')
    `
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: ROOT, encoding: 'utf8', timeout: 20_000 },
    )
    // Killed by the timeout means the worker held the process open.
    expect(r.signal).toBeNull()
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('started')
  })

  it('notices a feed that went quiet (the microphone) and not one that is fed', async () => {
    const stalls: string[] = []
    const dog = new Watchdog({
      feeds: { microphone: 200, speaker: 200 },
      intervalMs: 20,
      action: 'report',
      onStall: (what) => stalls.push(what),
    })
    const feeding = setInterval(() => dog.feed('speaker'), 20)
    await new Promise((r) => setTimeout(r, 500))
    clearInterval(feeding)
    await dog.stop()
    expect(stalls).toEqual(['microphone'])
  })
})
