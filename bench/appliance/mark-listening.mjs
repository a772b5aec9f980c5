// Preloaded (`--import`) into the offline run by appliance.bench.ts: when the run prints its `[mic]`
// line — written right after startAppliance resolved, i.e. the SessionLoop is listening for speech
// — write the time since this process started (performance.now(), from the process's timeOrigin)
// to stderr as one marker line. Changes nothing else.
import { performance } from 'node:perf_hooks'

const write = process.stdout.write.bind(process.stdout)
let marked = false
process.stdout.write = (chunk, ...rest) => {
  if (!marked && String(chunk).includes('[mic]')) {
    marked = true
    process.stderr.write(`NOCTURN_BENCH_LISTENING ${performance.now().toFixed(1)}\n`)
  }
  return write(chunk, ...rest)
}
