// The loader hook behind load-recorder.mjs; runs on Node's loader thread.
import { appendFileSync } from 'node:fs'

let log

export function initialize(data) {
  log = data?.log
}

export async function load(url, context, next) {
  if (log) appendFileSync(log, `${url}\n`)
  return next(url, context)
}
