import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createLogger } from './logger.js'
import { runOfflineDemo } from './offline-demo.js'

/** `npm start`: the offline run. Later the same entry becomes `nocturn run` on the device. */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { store: { type: 'string', default: 'var/nocturn-dev.db' } },
  })
  const storePath = resolve(values.store ?? 'var/nocturn-dev.db')
  mkdirSync(dirname(storePath), { recursive: true })
  // The readable timeline goes to stdout; log lines to stderr at warn unless asked for more.
  const logger = createLogger({
    level: process.env.NOCTURN_LOG_LEVEL ?? 'warn',
    destination: process.stderr,
  })
  return runOfflineDemo({
    storePath,
    logger,
    out: process.stdout,
    input: process.stdin,
    interactive: process.stdin.isTTY === true,
  })
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err)
    process.stderr.write(`nocturn: ${message}\n`)
    process.exitCode = 1
  },
)
