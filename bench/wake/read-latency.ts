// How much later a chunk's last frame reaches the listener when the microphone is read in idle
// bursts: `node --import tsx bench/wake/read-latency.ts [seconds]`. A real arecord on a FIFO-backed
// PCM (test/helpers/alsa.ts) fed in real time by RoomFeeds in this process, which stamps each
// 20 ms frame as it goes into the FIFO; ArecordMic stamps it as it is handed on. Per read cadence
// (each frame as it comes, as before; 80 ms bursts, as idle now), alternating: the delay of every
// 4th frame from the recorder's first — the frame that completes a wake-word chunk — p50 / p90,
// and reads per second. Reports; asserts nothing.
import { performance } from 'node:perf_hooks'
import { ArecordMic } from '../../src/adapters/alsa/arecord-mic.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { silentLogger } from '../../src/core/logger.js'
import { hermeticAlsa } from '../../test/helpers/alsa.js'
import { RoomFeeds } from '../../test/helpers/room-feed.js'
import { quantile } from '../machine.js'

const seconds = Number(process.argv[2] ?? 20)
/** READ_SLACK_MS: when a burst is read relative to its last frame's due time (ReadCadence's 3). */
const slack =
  process.env.READ_SLACK_MS === undefined ? undefined : Number(process.env.READ_SLACK_MS)
const out = (s: string) => process.stdout.write(`${s}\n`)

async function run(readMs: number): Promise<string> {
  const alsa = hermeticAlsa('fifo', { stall: false })
  const written: number[] = [] // by frame index from the reader's first: when it went in
  const feeds = new RoomFeeds([alsa.infile])
  feeds.start({
    onWrite: (_f, given) => {
      written[given / 640 - 1] = performance.now()
    },
  })
  const mic = new ArecordMic({
    device: alsa.capture,
    clock: realClock(),
    logger: silentLogger,
    env: alsa.env,
  })
  mic.reads.every(readMs)
  const delays: number[] = []
  let handed = 0
  let reads = 0
  let inRead = false
  const frames = seconds * 50
  const t0 = performance.now()
  await new Promise<void>((done) => {
    void mic.start({
      frame: () => {
        if (!inRead) {
          inRead = true
          reads++
          queueMicrotask(() => {
            inRead = false
          })
        }
        const at = written[handed]
        handed++
        if (handed % 4 === 0 && at !== undefined && handed > 50) delays.push(performance.now() - at)
        if (handed === frames) done()
      },
      error: () => {},
    })
  })
  const wall = (performance.now() - t0) / 1000
  await mic.stop()
  feeds.stop()
  const s = delays.sort((a, b) => a - b)
  return `| ${readMs === 20 ? 'each frame as it comes (before)' : `${readMs} ms bursts (idle now${slack === undefined ? '' : `, slack ${slack} ms`})`} | ${quantile(s, 0.5).toFixed(1)} / ${quantile(s, 0.9).toFixed(1)} | ${(reads / wall).toFixed(1)} |`
}

out('| reads | chunk-completing frame: into the FIFO → handed on, p50 / p90 (ms) | reads/s |')
out('|---|---|---|')
for (const ms of [20, 80, 20, 80]) out(await run(ms))
