// Runs after `npm ci` (postinstall). better-sqlite3, the store's driver, is an optional dependency
// only so that npm does not stop at its compiler output when it cannot build: this check makes
// the install fail anyway, with one message that says what is missing and what to do.
import { accessSync, constants } from 'node:fs'
import { createRequire } from 'node:module'
import { delimiter, join } from 'node:path'

const require = createRequire(import.meta.url)
try {
  const Database = require('better-sqlite3')
  new Database(':memory:').close()
} catch (err) {
  const onPath = (tool) =>
    (process.env.PATH ?? '').split(delimiter).some((dir) => {
      try {
        accessSync(join(dir, tool), constants.X_OK)
        return true
      } catch {
        return false
      }
    })
  const missing = ['make', 'g++', 'python3'].filter((t) => !onPath(t))
  const lines = [
    '',
    `nocturn: the store's driver (better-sqlite3) is not usable for Node ${process.versions.node} on ${process.platform}-${process.arch}.`,
    '  npm could not fetch a prebuilt binary for this Node and board, and compiling it failed.',
    missing.length > 0
      ? `  Missing build tools: ${missing.join(', ')}. Fix: sudo apt install build-essential python3, then npm ci again (README, step 1).`
      : '  The build tools are there: npm ci --foreground-scripts shows why the compile failed.',
    `  (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`,
    '',
  ]
  console.error(lines.join('\n'))
  process.exit(1)
}
