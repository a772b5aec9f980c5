import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '../..')

/**
 * vitest's global set-up: the built program (dist/), made once before any test file runs when a
 * fresh checkout has none. Tests that run the bundle or install it each built it on their own, and
 * two of them on the two workers at once could read a half-written build.
 */
export default function buildOnce(): void {
  if (existsSync(join(ROOT, 'dist', 'service', 'cli.js'))) return
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'ignore' })
}
