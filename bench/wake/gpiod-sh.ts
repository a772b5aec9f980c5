// Stand-ins for libgpiod 2's gpiomon and gpioset as POSIX sh scripts, for start-up timing
// (wake-startup.bench.ts). The tests' stand-ins (test/fixtures/gpiod/fake-gpiod.mjs) are node
// scripts: each spawn costs ~40 ms of CPU and wall time for node's own start, where the real C
// tools take a few ms, and a start waits for one (`gpiomon --version`) before its button is
// watched — a start timed with them is charged for node, not for Nocturn.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

/** A bin folder first on PATH: `--version` answers as libgpiod 2.2.1; otherwise the tool holds. */
export function shGpiod(): { readonly env: NodeJS.ProcessEnv; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-gpiod-sh-'))
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  for (const tool of ['gpiomon', 'gpioset']) {
    const p = join(bin, tool)
    writeFileSync(
      p,
      `#!/bin/sh\ncase "$1" in --version|-v) echo "${tool} (libgpiod) v2.2.1"; exit 0;; esac\nexec sleep 2147483647\n`,
    )
    chmodSync(p, 0o755)
  }
  return {
    env: { PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  }
}
