import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type ChildExit,
  SupervisedChild,
  type SupervisedChildOptions,
} from '../../src/adapters/child-process/supervised-child.js'
import { Backoff, type BackoffPolicy } from '../../src/core/backoff.js'
import { silentLogger } from '../../src/core/logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { processExists } from '../helpers/alsa.js'
import { zombieChildren } from '../helpers/fake-gpiod.js'
import { until } from '../helpers/wait.js'

// Real processes (sh, sleep); the restart waits run on a virtual clock, so each is counted
// exactly however slowly the machine runs the children.

const children: SupervisedChild[] = []
const dirs: string[] = []
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.stop()))
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

interface Seen {
  readonly failures: Array<{ message: string; restartInMs: number | undefined }>
  readonly pids: number[]
  readonly lines: string[]
  healthy: number
}

function supervise(
  script: string,
  policy: BackoffPolicy,
  more: Partial<SupervisedChildOptions> = {},
): { child: SupervisedChild; clock: VirtualClock; seen: Seen } {
  const clock = new VirtualClock()
  const seen: Seen = { failures: [], pids: [], lines: [], healthy: 0 }
  const describeExit = (exit: ChildExit, stderr: string) =>
    new Error(`code ${exit.code} signal ${exit.signal}: ${stderr.trim()}`)
  const child = new SupervisedChild({
    command: 'sh',
    args: ['-c', script],
    clock,
    logger: silentLogger,
    backoff: new Backoff(policy),
    describeExit,
    onFailure: (e, restartInMs) => seen.failures.push({ message: e.message, restartInMs }),
    onHealthy: () => seen.healthy++,
    onSpawn: (c) => seen.pids.push(c.pid as number),
    onLine: (line) => seen.lines.push(line),
    ...more,
  })
  children.push(child)
  return { child, clock, seen }
}

describe('SupervisedChild', () => {
  it('describes an exit with its stderr, restarts after the backoff, and gives up after N in a row', async () => {
    const { child, clock, seen } = supervise('echo "line 17 busy" >&2; exit 3', {
      initialMs: 100,
      maxMs: 1000,
      giveUpAfter: 3,
    })
    child.start()
    await until(() => seen.failures.length === 1, 'seen.failures.length === 1', 60_000)
    expect(seen.failures[0]).toEqual({
      message: 'code 3 signal null: line 17 busy',
      restartInMs: 100,
    })
    // Nothing restarts before the wait has passed.
    await clock.advance(99)
    expect(seen.pids).toHaveLength(1)
    await clock.advance(1)
    await until(() => seen.failures.length === 2, 'seen.failures.length === 2', 60_000)
    expect(seen.failures[1]?.restartInMs).toBe(200)
    await clock.advance(200)
    await until(() => seen.failures.length === 3, 'seen.failures.length === 3', 60_000)
    expect(seen.failures[2]?.restartInMs).toBeUndefined()
    await clock.advance(60_000)
    expect(seen.pids).toHaveLength(3)
    expect(child.running).toBe(false)
    // start() again after a give-up tries once more, from the shortest wait.
    child.start()
    await until(() => seen.failures.length === 4, 'seen.failures.length === 4', 60_000)
    expect(seen.failures[3]?.restartInMs).toBe(100)
  })

  it('replace() kills the running child and starts the next at once, and that is no failure', async () => {
    const { child, seen } = supervise(
      'echo up; exec sleep 30',
      { initialMs: 100, maxMs: 1000 },
      {
        killSignal: 'SIGKILL',
      },
    )
    child.start()
    await until(() => seen.lines.length === 1, 'seen.lines.length === 1', 60_000)
    const first = child.child?.pid as number
    child.replace()
    // The next child exists before the old one has even been reaped.
    const second = child.child?.pid as number
    expect(second).toBeGreaterThan(0)
    expect(second).not.toBe(first)
    await until(() => !processExists(first), '!processExists(first)', 60_000)
    await until(() => seen.lines.length === 2, 'seen.lines.length === 2', 60_000)
    expect(seen.lines).toEqual(['up', 'up'])
    expect(seen.failures).toEqual([])
    await child.stop()
    expect(processExists(second)).toBe(false)
    expect(zombieChildren()).toEqual([])
  })

  it('a child that then runs the healthy time clears the failure streak, and says so once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-child-'))
    dirs.push(dir)
    // Fails the first time, then stays up.
    const script = `if [ -e "${dir}/ran" ]; then exec sleep 30; fi; touch "${dir}/ran"; exit 1`
    const { child, clock, seen } = supervise(script, {
      initialMs: 50,
      maxMs: 1000,
      healthyMs: 5000,
    })
    child.start()
    await until(() => seen.failures.length === 1, 'seen.failures.length === 1', 60_000)
    expect(child.failures).toBe(1)
    await clock.advance(50)
    await until(() => seen.pids.length === 2, 'seen.pids.length === 2', 60_000)
    await clock.advance(4999)
    expect(seen.healthy).toBe(0)
    await clock.advance(1)
    expect(seen.healthy).toBe(1)
    expect(child.failures).toBe(0)
    await clock.advance(60_000)
    expect(seen.healthy).toBe(1)
  })

  it('restart() lets the old child end before the next starts; stop() ends one that ignores SIGTERM', async () => {
    const { child, seen } = supervise('trap "" TERM; echo up; while :; do sleep 0.05; done', {
      initialMs: 100,
      maxMs: 1000,
    })
    child.start()
    await until(() => seen.lines.length === 1, 'seen.lines.length === 1', 60_000)
    const first = child.child?.pid as number
    // SIGTERM is ignored: the next child waits for the SIGKILL that follows the grace period.
    await child.restart()
    expect(processExists(first)).toBe(false)
    const second = child.child?.pid as number
    expect(second).not.toBe(first)
    await until(() => seen.lines.length === 2, 'seen.lines.length === 2', 60_000)
    await child.stop()
    expect(processExists(second)).toBe(false)
    expect(seen.failures).toEqual([])
  })

  it('a command that is not installed is a failure with the spawn error, restarted like any other', async () => {
    const clock = new VirtualClock()
    const failures: Array<{ code: string | undefined; restartInMs: number | undefined }> = []
    const child = new SupervisedChild({
      command: 'nocturn-no-such-tool',
      args: [],
      clock,
      logger: silentLogger,
      backoff: new Backoff({ initialMs: 10, maxMs: 100 }),
      describeExit: (exit) => exit.spawnError ?? new Error('ran'),
      onFailure: (e, restartInMs) =>
        failures.push({ code: (e as NodeJS.ErrnoException).code, restartInMs }),
    })
    children.push(child)
    child.start()
    await until(() => failures.length === 1, 'failures.length === 1', 60_000)
    await clock.advance(10)
    await until(() => failures.length === 2, 'failures.length === 2', 60_000)
    expect(failures).toEqual([
      { code: 'ENOENT', restartInMs: 10 },
      { code: 'ENOENT', restartInMs: 20 },
    ])
  })

  it('a child that dies while its output is paused is reported only after all it wrote was read', async () => {
    const clock = new VirtualClock()
    const got: Buffer[] = []
    let bytesAtFailure = -1
    let paused = false
    const child = new SupervisedChild({
      command: 'sh',
      // Writes, then dies while this side reads nothing (a microphone read in bursts, idle).
      args: ['-c', 'printf first; sleep 0.3; printf second-and-last; exit 1'],
      clock,
      logger: silentLogger,
      backoff: new Backoff({ initialMs: 60_000, maxMs: 60_000 }),
      describeExit: () => new Error('ended'),
      onFailure: () => {
        bytesAtFailure = Buffer.concat(got).length
      },
      onStdout: (chunk) => {
        got.push(Buffer.from(chunk))
        paused = true
        return false // the reader resumes only when told (here: never, until the child is gone)
      },
    })
    children.push(child)
    await child.start()
    await until(() => bytesAtFailure >= 0, 'bytesAtFailure >= 0', 60_000)
    expect(paused).toBe(true)
    // Its last bytes came before the failure: nothing the dead child heard arrives after it.
    expect(bytesAtFailure).toBe('firstsecond-and-last'.length)
    expect(Buffer.concat(got).toString()).toBe('firstsecond-and-last')
  })

  it('stdout read through its socket: every byte in order across restarts, none after a stop', async () => {
    const clock = new VirtualClock()
    const got: Buffer[] = []
    let exits = 0
    const child = new SupervisedChild({
      command: 'sh',
      // 64 KiB in odd pieces, then exit: the reader's buffer (16 KiB) is reused many times.
      args: ['-c', 'i=0; while [ $i -lt 256 ]; do printf "%0255d\\n" $i; i=$((i+1)); done'],
      clock,
      logger: silentLogger,
      backoff: new Backoff({ initialMs: 10, maxMs: 10 }),
      describeExit: () => new Error('ended'),
      onFailure: () => exits++,
      // The chunk is a view of the reused buffer: keep a copy.
      onStdout: (chunk) => got.push(Buffer.from(chunk)),
    })
    children.push(child)
    await child.start()
    expect(child.child?.pid).toBeTypeOf('number')
    const one = Array.from({ length: 256 }, (_, i) => `${String(i).padStart(255, '0')}\n`).join('')
    await until(
      () => exits === 1 && Buffer.concat(got).length === one.length,
      'exits === 1 && Buffer.concat(got).length === one.length',
      60_000,
    )
    expect(Buffer.concat(got).toString()).toBe(one)
    await clock.advance(10)
    await until(
      () => Buffer.concat(got).length === 2 * one.length,
      'Buffer.concat(got).length === 2 * one.length',
      60_000,
    )
    expect(Buffer.concat(got).toString()).toBe(one + one)
    await child.stop()
    expect(child.child).toBeUndefined()
    // Started and stopped at once: the child set up meanwhile is never launched.
    const pids: number[] = []
    const late = new SupervisedChild({
      command: 'sleep',
      args: ['30'],
      clock,
      logger: silentLogger,
      backoff: new Backoff({ initialMs: 10, maxMs: 10 }),
      describeExit: () => new Error('ended'),
      onStdout: () => {},
      onSpawn: (c) => pids.push(c.pid as number),
    })
    const started = late.start()
    await late.stop()
    await started
    expect(pids).toEqual([])
    expect(late.child).toBeUndefined()
  })
})
