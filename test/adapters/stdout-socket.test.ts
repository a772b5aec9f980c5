import { spawn } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import {
  openStdoutSocket,
  type StdoutSocket,
} from '../../src/adapters/child-process/stdout-socket.js'
import { until } from '../helpers/wait.js'

// A child's stdout read through the socket the microphone uses: a paused socket is read at the
// caller's time (`readNow`) with what waits handed on before the call returns — no poll, so the
// process is woken by its own timer alone (bench/RESULTS.md, "the microphone's wake-up for
// nothing": over a third of an idle microphone's wake-ups came from a paused socket libuv still
// polled) — and falls back to polling when nothing waits or the child is gone.

const opened: StdoutSocket[] = []
afterEach(() => {
  for (const s of opened.splice(0)) s.close()
})

/** A shell child running `script` with the socket as its stdout; each chunk pauses the reads. */
async function child(script: string) {
  const chunks: string[] = []
  let pauseAfter = true
  const socket = await openStdoutSocket((chunk) => {
    chunks.push(Buffer.from(chunk).toString())
    // The caller's rule as the read cadence's: false — read again at my time, not as it comes.
    return !pauseAfter
  })
  opened.push(socket)
  const proc = spawn('sh', ['-c', script], { stdio: ['ignore', socket.childEnd, 'ignore'] })
  socket.handedOver()
  const exited = new Promise<void>((r) => proc.once('exit', () => r()))
  return {
    socket,
    chunks,
    exited,
    readOnAfter: () => {
      pauseAfter = false
    },
    kill: () => proc.kill('SIGKILL'),
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('StdoutSocket.readNow', () => {
  it('hands on what waits before it returns, and nothing comes between reads', async () => {
    const c = await child('printf A; sleep 0.2; printf B; exec sleep 5')
    await until(() => c.chunks.length === 1)
    expect(c.chunks).toEqual(['A'])
    // B is written while the socket is paused: it waits, nothing reads it.
    await sleep(500)
    expect(c.chunks).toEqual(['A'])
    c.socket.readNow()
    // Synchronously: within the call, not at the next poll.
    expect(c.chunks).toEqual(['A', 'B'])
    c.kill()
  })

  it('with nothing waiting, reads again as the child writes (no read is lost to an empty socket)', async () => {
    const c = await child('printf A; sleep 0.4; printf B; exec sleep 5')
    await until(() => c.chunks.length === 1)
    c.socket.readNow()
    expect(c.chunks).toEqual(['A'])
    await until(() => c.chunks.length === 2)
    expect(c.chunks).toEqual(['A', 'B'])
    c.kill()
  })

  it('when the caller asks for more, reads on as the child writes', async () => {
    const c = await child('printf A; sleep 0.2; printf B; sleep 0.3; printf C; exec sleep 5')
    await until(() => c.chunks.length === 1)
    await sleep(400)
    c.readOnAfter()
    c.socket.readNow()
    expect(c.chunks).toEqual(['A', 'B'])
    await until(() => c.chunks.length === 3)
    expect(c.chunks.join('')).toBe('ABC')
    c.kill()
  })

  it('a child gone while paused: what it wrote is read, then the socket ends', async () => {
    const c = await child('printf A; sleep 0.2; printf B')
    await until(() => c.chunks.length === 1)
    await c.exited
    c.readOnAfter()
    c.socket.readNow()
    await c.socket.drain()
    expect(c.chunks.join('')).toBe('AB')
  })
})
