import { type ChildProcess, spawn } from 'node:child_process'

/**
 * Listens to the null sink's monitor with `parec` (1 ms latency, so the sink renders in ~1 ms
 * quanta) in its own process, timestamping every read with the monotonic clock the feeder uses.
 * Sample i is placed at off + i / rate, off being the earliest (arrival − samples so far / rate):
 * the read that came soonest after its audio was rendered.
 */
export class Monitor {
  readonly #child: ChildProcess
  readonly #chunks: Buffer[] = []
  #bytes = 0
  #off = Number.POSITIVE_INFINITY

  /** `latencyMs` 1 for timing (the sink renders in ~1 ms quanta); more for long gap counts. */
  constructor(env: NodeJS.ProcessEnv, sink = 'vsink', latencyMs = 1) {
    this.#child = spawn(
      'parec',
      [
        '--raw',
        '--format=s16le',
        '--rate=24000',
        '--channels=1',
        `--device=${sink}.monitor`,
        `--latency-msec=${latencyMs}`,
      ],
      { env, stdio: ['ignore', 'pipe', 'ignore'] },
    )
    this.#child.stdout?.on('data', (c: Buffer) => {
      const now = nowMs()
      this.#chunks.push(c)
      this.#bytes += c.byteLength
      this.#off = Math.min(this.#off, now - (this.#bytes / 2 / 24_000) * 1000)
    })
  }

  /** Waits until the monitor has delivered audio (parec takes a moment to start). */
  async ready(): Promise<void> {
    while (this.#bytes < 4800) await new Promise((r) => setTimeout(r, 10))
  }

  /** The samples heard and the time (ms, monotonic) of sample 0. */
  async stop(): Promise<{ samples: Int16Array; t0: number }> {
    const gone = new Promise((r) => this.#child.once('exit', r))
    this.#child.kill('SIGTERM')
    await gone
    const all = Buffer.concat(this.#chunks)
    const samples = new Int16Array(all.buffer, all.byteOffset, Math.floor(all.byteLength / 2))
    return { samples, t0: this.#off }
  }
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6
}

/**
 * Stale audio: from the barge-in until the audible run playing at that moment ends (audible:
 * |x| > 100; a run ends at the first 5 ms of silence). Also the count of 1 ms+ gaps before it.
 */
export function staleAfter(heard: { samples: Int16Array; t0: number }, bargeInMs: number): number {
  const { samples, t0 } = heard
  const rate = 24_000
  const start = Math.max(0, Math.floor(((bargeInMs - t0) / 1000) * rate))
  const need = (5 * rate) / 1000
  let quiet = 0
  for (let i = start; i < samples.length; i++) {
    if (Math.abs(samples[i] as number) <= 100) {
      quiet++
      if (quiet >= need) return t0 + ((i - quiet + 1) / rate) * 1000 - bargeInMs
    } else quiet = 0
  }
  return Number.NaN
}
