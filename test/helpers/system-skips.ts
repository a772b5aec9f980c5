import { existsSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'
import {
  INSTALL_SYSTEM_PACKAGES,
  packagesFor,
  SYSTEM_SKIPS_ENV,
  type SystemSkipNote,
} from './system.js'

/**
 * The vitest settings that end a run with one line counting the tests skipped for missing system
 * packages and naming the command that installs them. The helpers of test/helpers/system.ts note
 * each skip they decide, with its test file, in a file of this run; the reporter counts the
 * skipped tests of those files.
 */
export function systemSkipsConfig() {
  const log = join(tmpdir(), `nocturn-system-skips-${process.pid}.jsonl`)
  return {
    env: { [SYSTEM_SKIPS_ENV]: log },
    setupFiles: [join(import.meta.dirname, 'test-file-setup.ts')],
    reporters: ['default', new SystemSkipsReporter(log)],
  }
}

class SystemSkipsReporter implements Reporter {
  readonly #log: string

  constructor(log: string) {
    this.#log = log
  }

  onTestRunStart(): void {
    rmSync(this.#log, { force: true })
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const notes: SystemSkipNote[] = existsSync(this.#log)
      ? readFileSync(this.#log, 'utf8')
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as SystemSkipNote)
      : []
    rmSync(this.#log, { force: true })
    const files = new Set(notes.map((n) => n.file))
    let skipped = 0
    for (const module of testModules) {
      if (!files.has(module.moduleId)) continue
      for (const test of module.children.allTests()) {
        if (test.result().state === 'skipped' && test.options.mode !== 'todo') skipped++
      }
    }
    if (skipped === 0) return
    const packages = packagesFor(notes.flatMap((n) => n.missing))
    const one = packages.length === 1
    process.stdout.write(
      `\nnocturn: ${skipped} ${skipped === 1 ? 'test' : 'tests'} skipped because ${packages.join(', ')} ${one ? 'is' : 'are'} not installed — ${INSTALL_SYSTEM_PACKAGES} installs ${one ? 'it' : 'them'}\n`,
    )
  }
}
