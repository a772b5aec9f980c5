import { mkdtempSync, readSync, rmSync } from 'node:fs'
import { connect, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A child's stdout as one end of a Unix stream socket, read here into one reused buffer. */
export interface StdoutSocket {
  /** Hand this to `spawn` as the child's stdout, then call `handedOver()`. */
  readonly childEnd: Socket
  /** Closes this process's copy of the child's end, so the child's exit ends the stream. */
  handedOver(): void
  /** Reads again after `onChunk` returned false (what came meanwhile waited in the socket). */
  resume(): void
  /**
   * Like `resume()`, but what already waits in the socket is handed to `onChunk` now, before this
   * returns, with no poll of the socket: if `onChunk` returns false again, the process was woken
   * by the caller's own timer alone. Reading goes on as after `resume()` when `onChunk` asks for
   * more, or nothing was waiting, or the child's end has closed.
   */
  readNow(): void
  /**
   * Reads to the end whatever `onChunk` returns: the child is gone, what it wrote still counts.
   * Resolves once all of it was handed on (the socket closed).
   */
  drain(): Promise<void>
  /** Stops reading and closes both ends (the child is gone or never started). */
  close(): void
}

/**
 * Why not the pipe `spawn` makes: a Node stream costs about 120 µs of CPU per read on top of the
 * wake-up itself (Readable.push, `maybeReadMore`, a fresh 64 KiB buffer each time), and a
 * microphone is read 50 times a second for as long as the speaker runs — measured, that was the
 * largest part of the audio path's CPU (bench/RESULTS.md). `net.connect`'s documented `onread`
 * reads into one buffer with no stream machinery, but only on a socket, so the child writes into a
 * connected Unix socket instead, which it cannot tell from a pipe.
 *
 * `onChunk` gets a view of the reused buffer, valid only during the call: copy what you keep.
 * Returning false stops reading (libuv stops polling the socket once the child's next write has
 * woken the process; later writes wait in the socket's buffer) until `resume()` or `readNow()`.
 * The socket's path lives in a fresh private (0700) directory only until the pair is connected,
 * so no other user can connect in between; both are removed at once.
 */
export async function openStdoutSocket(
  onChunk: (chunk: Uint8Array) => unknown,
  bufferBytes = 16 * 1024,
): Promise<StdoutSocket> {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-stdout-'))
  const path = join(dir, 's')
  const server = createServer()
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(path, resolve)
    })
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve))
    const buffer = Buffer.allocUnsafe(bufferBytes)
    let draining = false
    const reader = connect({
      path,
      onread: {
        buffer,
        // false: net pauses the socket, and with `onread` a pause stops the handle's reads.
        callback: (n, buf) => onChunk(buf.subarray(0, n)) !== false || draining,
      },
    })
    await new Promise<void>((resolve, reject) => {
      reader.once('connect', resolve)
      reader.once('error', reject)
    })
    const childEnd = await accepted
    // A child that dies takes its end with it; errors then are its exit's to report.
    reader.on('error', () => {})
    childEnd.on('error', () => {})
    // Nothing is ever sent the other way; the child's end is only written by the child.
    childEnd.pause()
    return {
      childEnd,
      handedOver: () => childEnd.destroy(),
      resume: () => reader.resume(),
      readNow: () => {
        if (draining || !readWaiting(reader, buffer, onChunk)) reader.resume()
      },
      drain: () => {
        draining = true
        const closed = new Promise<void>((resolve) => {
          if (reader.destroyed) resolve()
          else reader.once('close', () => resolve())
        })
        reader.resume()
        return closed
      },
      close: () => {
        childEnd.destroy()
        reader.destroy()
      },
    }
  } finally {
    server.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The parts of net's socket handle read here; absent in a build that lays them out otherwise. */
interface ReadableHandle {
  readonly fd?: number
  readonly reading?: boolean
}

/**
 * Why read the descriptor ourselves: a paused socket is still in libuv's epoll set until the next
 * write to it wakes the process, and only then taken out (lazily) — one wake-up for nothing after
 * every pause, over a third of an idle microphone's (bench/RESULTS.md, "the microphone's wake-up
 * for nothing"). Reading what waits, at the caller's timer, leaves the handle stopped and out of
 * the set.
 * True when everything waiting was handed on and `onChunk` wants no more now.
 */
function readWaiting(
  reader: Socket,
  buffer: Buffer,
  onChunk: (chunk: Uint8Array) => unknown,
): boolean {
  const handle = (reader as unknown as { _handle?: ReadableHandle })._handle
  const fd = handle?.fd
  if (handle === undefined || handle.reading !== false || typeof fd !== 'number' || fd < 0)
    return false
  let n: number
  try {
    n = readSync(fd, buffer, 0, buffer.length, null)
  } catch {
    // EAGAIN (nothing yet) or the socket's error: libuv's reading waits for it or reports it.
    return false
  }
  // 0: the child's end closed; libuv's read sees the end and closes the socket.
  return n > 0 && onChunk(buffer.subarray(0, n)) === false
}
