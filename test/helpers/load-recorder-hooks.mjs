// The loader hook behind load-recorder.mjs; runs on Node's loader thread.
import { appendFileSync } from 'node:fs'

let log

export function initialize(data) {
  log = data?.log
}

export async function load(url, context, next) {
  // Wall-clock ms, like pino's `time`: a test can tell what loaded before a given log line.
  if (log) appendFileSync(log, `${Date.now()} ${url}\n`)
  return next(url, context)
}
