// One offline run with the figures a slow board cares about, for scripts/slow-board.sh: prints one
// JSON line to stderr. Times are from this process's start (performance.now()). Runs the built
// program (dist/, as a device does), so `npm run build` first.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { PassThrough } from 'node:stream'
import { runOffline } from '../../dist/app/offline-run.js'
import { silentLogger } from '../../dist/core/logger.js'

const marks = {}
const mark = (name, line, text) => {
  if (marks[name] === undefined && line.includes(text)) marks[name] = performance.now()
}
const out = new PassThrough()
let rest = ''
out.on('data', (c) => {
  rest += c.toString()
  const lines = rest.split('\n')
  rest = lines.pop() ?? ''
  for (const l of lines) {
    mark('ready', l, '[mic]') // startAppliance resolved: the loop listens for speech
    mark('sessionOpen', l, '[led]     listening')
    mark('tap', l, 'Anna taps Approve')
    mark('house', l, '[house]   home/front-door/set')
    mark('closed', l, '[session] closed')
  }
})
const loop = monitorEventLoopDelay({ resolution: 10 })
loop.enable()
const code = await runOffline({
  out,
  logger: silentLogger,
  root: join(import.meta.dirname, '../..'),
  workDir: mkdtempSync(join(tmpdir(), 'nocturn-slow-board-')),
})
loop.disable()
const ms = (ns) => Math.round(ns / 1e5) / 10
process.stderr.write(
  `${JSON.stringify({
    code,
    startToListeningMs: Math.round(marks.ready ?? -1),
    speechToSessionMs: Math.round((marks.sessionOpen ?? 0) - (marks.ready ?? 0)),
    approvalRoundTripMs: Math.round((marks.house ?? 0) - (marks.tap ?? 0)),
    sceneMs: Math.round((marks.closed ?? 0) - (marks.ready ?? 0)),
    totalMs: Math.round(performance.now()),
    loopDelayMs: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
  })}\n`,
)
process.exit(code)
