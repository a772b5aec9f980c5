// The offline run as its own process, for the slow-machine test: `node --import tsx <this> <dir>`.
import { join } from 'node:path'
import { runOffline } from '../../src/app/offline-run.js'
import { silentLogger } from '../../src/core/logger.js'

const code = await runOffline({
  out: process.stdout,
  logger: silentLogger,
  root: join(import.meta.dirname, '../..'),
  workDir: process.argv[2] as string,
})
process.exit(code)
