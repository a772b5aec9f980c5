import { execFile } from 'node:child_process'

/** libgpiod major version: 1 on Debian Bookworm / Pi OS 12, 2 on Trixie. They differ in every argument. */
export type GpiodMajor = 1 | 2

/** `gpiomon (libgpiod) v1.6.3` (1.x) or `gpiomon (libgpiod) v2.2.1` (2.x) → the major version. */
export function parseGpiodVersion(text: string): GpiodMajor | undefined {
  const m = /\bv(\d+)\.(\d+)/.exec(text)
  if (!m) return undefined
  const major = Number(m[1])
  if (major === 1 || major === 2) return major
  return undefined
}

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** Set when the command could not be started at all (ENOENT: not installed). */
  readonly spawnError?: string
}

/** Runs a short command to completion; never throws. */
export function runCommand(
  cmd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  // A probe of a C binary takes milliseconds; the bound is for a hung one, and holds for a Zero 2 W
  // under load (or a stand-in script that must start a whole Node first).
  timeoutMs = 15_000,
): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(cmd, [...args], { env, timeout: timeoutMs }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: unknown }) | null
      if (e && typeof e.code === 'string') {
        resolve({ code: null, stdout: '', stderr: '', spawnError: `${cmd}: ${e.code}` })
        return
      }
      const code = e ? (typeof e.code === 'number' ? e.code : 1) : 0
      resolve({ code, stdout: String(stdout), stderr: String(stderr) })
    })
  })
}

/** Asks the installed `gpiomon` which libgpiod it belongs to. */
export async function detectGpiodVersion(
  env: NodeJS.ProcessEnv = process.env,
): Promise<GpiodMajor> {
  const r = await runCommand('gpiomon', ['--version'], env)
  if (r.spawnError) {
    throw new Error(
      `gpiomon is not installed (${r.spawnError}); install it: sudo apt install gpiod`,
    )
  }
  const v = parseGpiodVersion(`${r.stdout}\n${r.stderr}`)
  if (!v) {
    const first = `${r.stdout}${r.stderr}`.split('\n')[0]?.slice(0, 120)
    throw new Error(`cannot tell the libgpiod version from "gpiomon --version" (said "${first}")`)
  }
  return v
}
