import { spawnSync } from 'node:child_process'
import { chmodSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/**
 * Tests that use real system parts (mosquitto, arecord, gpiomon…) skip with a printed reason when
 * the part is missing — unless NOCTURN_REQUIRE_SYSTEM=1 (set by .ci/run), where a missing part is
 * a failure, so CI can never pass by skipping them.
 */
export const REQUIRE_SYSTEM = process.env.NOCTURN_REQUIRE_SYSTEM === '1'

/** Returns a skip reason, or undefined when every command is on PATH. Throws under CI. */
export function missingCommands(...commands: string[]): string | undefined {
  const missing = commands.filter(
    (c) =>
      spawnSync('sh', ['-c', `command -v ${c}`], { stdio: 'ignore', env: systemEnv() }).status !==
      0,
  )
  if (missing.length === 0) return undefined
  const reason = `skipped: ${missing.join(', ')} not installed (Debian: apt-get install the package that provides it)`
  if (REQUIRE_SYSTEM) throw new Error(`NOCTURN_REQUIRE_SYSTEM=1 but ${reason.slice(9)}`)
  process.stdout.write(`${reason}\n`)
  return reason
}

/** The environment with the sbin folders on PATH: Debian puts daemons such as mosquitto there. */
export function systemEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/local/sbin:/usr/sbin:/sbin` }
}

/**
 * Adds o+x (traverse, not list) to every ancestor of `path` that lacks it, so an unprivileged
 * probe reaches a clone under a private (0700) temporary folder. Not taken back: test files run in
 * parallel workers, and one putting the modes back would cut off another's probe mid-run.
 */
export function grantTraverse(path: string): void {
  for (let p = resolve(path); ; p = dirname(p)) {
    const mode = statSync(p).mode & 0o7777
    if ((mode & 0o001) === 0) chmodSync(p, mode | 0o001)
    if (dirname(p) === p) break
  }
}
