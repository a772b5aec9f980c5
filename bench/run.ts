// Runs every bench/*.bench.ts in its own process, one after another, so they do not disturb each
// other. `npm run bench -- <name>` runs only the benchmarks whose file name contains <name>.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

const filter = process.argv[2] ?? ''
const dir = import.meta.dirname
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts') && f.includes(filter))
  .sort()
if (benches.length === 0) {
  process.stderr.write(`no benchmark matches "${filter}"\n`)
  process.exit(1)
}
let failed = 0
for (const b of benches) {
  process.stdout.write(`\n## ${b}\n`)
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(dir, b)], { stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
