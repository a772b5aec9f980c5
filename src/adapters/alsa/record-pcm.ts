import { spawn } from 'node:child_process'
import { childExitError } from './alsa-error.js'
import { pcmArgs } from './pcm-args.js'

export interface RecordPcmOptions {
  readonly device: string
  readonly rateHz: number
  /** How much to record, in bytes of S16LE mono. */
  readonly bytes: number
  /** Called as audio arrives, with how many bytes there are so far (prompts follow the audio). */
  readonly onProgress?: (bytesSoFar: number) => void
  readonly command?: string
}

/**
 * A fixed length of audio from one `arecord`, for enrolment: one continuous stream, so the
 * prompts follow the audio's own clock and a file-backed test PCM gives its clips in order.
 * Rejects with the device's own error when arecord cannot open it or stops early.
 */
export function recordPcm(o: RecordPcmOptions): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const out = new Uint8Array(o.bytes)
    let have = 0
    let stderr = ''
    let done = false
    const child = spawn(o.command ?? 'arecord', pcmArgs(o.device, o.rateHz), {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (s: string) => {
      stderr = (stderr + s).slice(-4000)
    })
    child.stdout.on('data', (b: Buffer) => {
      if (done) return
      const take = Math.min(b.length, o.bytes - have)
      out.set(b.subarray(0, take), have)
      have += take
      o.onProgress?.(have)
      if (have === o.bytes) {
        done = true
        child.kill('SIGTERM')
        resolve(out)
      }
    })
    const fail = (exit: {
      code: number | null
      signal: NodeJS.Signals | null
      spawnError?: Error
    }) => {
      if (done) return
      done = true
      reject(childExitError('arecord', 'capture', o.device, exit, stderr))
    }
    child.on('error', (spawnError) => fail({ code: null, signal: null, spawnError }))
    child.on('close', (code, signal) => fail({ code, signal }))
  })
}
