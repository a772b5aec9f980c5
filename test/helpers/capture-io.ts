import { PassThrough } from 'node:stream'
import type { Io } from '../../src/app/commands/pair.js'

/**
 * A command's Io writing into memory: `text.out` and `text.err` hold all it wrote so far, and
 * `env` is the whole environment it sees.
 */
export function captureIo(env: NodeJS.ProcessEnv = {}): {
  io: Io
  text: { readonly out: string; readonly err: string }
} {
  const out = new PassThrough()
  const err = new PassThrough()
  const text = { out: '', err: '' }
  out.on('data', (d: Buffer) => {
    text.out += d.toString()
  })
  err.on('data', (d: Buffer) => {
    text.err += d.toString()
  })
  return { io: { out, err, env }, text }
}
