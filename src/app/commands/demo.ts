import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createLogger } from '../logger.js'
import { runOfflineDemo } from '../offline-demo.js'

/** `nocturn demo [--store path]`: what `npm start` runs. */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
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
