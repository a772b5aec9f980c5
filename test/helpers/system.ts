import { spawnSync } from 'node:child_process'
import { appendFileSync, chmodSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'

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
  return missing.length === 0 ? undefined : systemSkip(missing)
}

/**
 * The skip for missing system parts (commands, or paths such as /usr/bin/chromium): prints the
 * reason and notes it for the end of the run (SYSTEM_SKIPS_ENV); under CI it throws instead.
 */
export function systemSkip(missing: readonly string[]): string {
  const packages = packagesFor(missing).join(' ')
  const reason = `skipped: ${missing.join(', ')} not installed (Debian package ${packages}: ${INSTALL_SYSTEM_PACKAGES})`
  if (REQUIRE_SYSTEM) throw new Error(`NOCTURN_REQUIRE_SYSTEM=1 but ${reason.slice(9)}`)
  process.stdout.write(`${reason}\n`)
  const log = process.env[SYSTEM_SKIPS_ENV]
  if (log !== undefined) {
    const note: SystemSkipNote = { file: process.env[TEST_FILE_ENV] ?? '', missing: [...missing] }
    appendFileSync(log, `${JSON.stringify(note)}\n`)
  }
  return reason
}

/** Names the file (JSON lines of SystemSkipNote) where a test run collects the skips decided. */
export const SYSTEM_SKIPS_ENV = 'NOCTURN_SYSTEM_SKIPS'
/** Names the test file being collected, for the note (set by test/helpers/test-file-setup.ts). */
export const TEST_FILE_ENV = 'NOCTURN_TEST_FILE'

export interface SystemSkipNote {
  /** The test file whose collection decided the skip. */
  readonly file: string
  readonly missing: readonly string[]
}

/** The one command that installs every missing package of scripts/system-packages.txt. */
export const INSTALL_SYSTEM_PACKAGES = `${process.getuid?.() === 0 ? '' : 'sudo '}scripts/install-system-packages.sh`

/** Which Debian package provides each command the tests look for (scripts/system-packages.txt). */
export function systemPackages(): Map<string, string> {
  const list = readFileSync(join(import.meta.dirname, '../../scripts/system-packages.txt'), 'utf8')
  const provider = new Map<string, string>()
  for (const line of list.split('\n')) {
    const [pkg, ...commands] = line.trim().split(/\s+/)
    if (pkg === undefined || pkg === '' || pkg.startsWith('#')) continue
    // A path (/usr/bin/chromium) also names its package by its last part: a test told to look
    // elsewhere (NOCTURN_CHROMIUM) still names the package that would install it.
    for (const c of commands) {
      provider.set(c, pkg)
      if (c.includes('/')) provider.set(basename(c), pkg)
    }
  }
  return provider
}

/** The Debian packages that provide these commands (a command not in the list names itself). */
export function packagesFor(missing: readonly string[]): string[] {
  const provider = systemPackages()
  return [...new Set(missing.map((c) => provider.get(c) ?? provider.get(basename(c)) ?? c))]
}

/**
 * The environment with the sbin folders on PATH: Debian puts daemons such as mosquitto there.
 * NOCTURN_SYSTEM_PATH replaces that PATH: scripts/without-system-packages.sh sets it to one without
 * the system packages, which the sbin folders added back would bring back.
 */
export function systemEnv(): NodeJS.ProcessEnv {
  const path =
    process.env.NOCTURN_SYSTEM_PATH ?? `${process.env.PATH ?? ''}:/usr/local/sbin:/usr/sbin:/sbin`
  return { ...process.env, PATH: path }
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
