import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { systemPackages } from '../helpers/system.js'
import { CHROMIUM } from '../web/browser.js'

const repo = join(import.meta.dirname, '../..')

describe('the end of npm test counts the skips for missing system packages', () => {
  it('one line counts the tests the helpers skipped and names the command that installs them', () => {
    // Two fixture files: four tests skipped for a command nobody has, one passing beside them;
    // in the other file a test skipped for a reason of its own and a todo, neither counted.
    const r = spawnSync(
      process.execPath,
      [
        join(repo, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--config',
        'test/fixtures/system-skips/vitest.config.ts',
      ],
      { cwd: repo, encoding: 'utf8', env: { ...process.env, NOCTURN_REQUIRE_SYSTEM: '' } },
    )
    expect(r.status, r.stdout + r.stderr).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.filter((l) => l.startsWith('nocturn: '))).toHaveLength(1)
    expect(lines.at(-1)).toMatch(
      /^nocturn: 4 tests skipped because nocturn-no-such-command is not installed — (sudo )?scripts\/install-system-packages\.sh installs it$/,
    )
  })

  it('every command a test looks for is in scripts/system-packages.txt, which .ci/run installs', () => {
    const files = readdirSync(join(repo, 'test'), { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.startsWith('fixtures'),
    )
    const commands = new Set<string>()
    for (const f of files) {
      const text = readFileSync(join(repo, 'test', f), 'utf8')
      for (const call of text.matchAll(/missingCommands\(([^)]*)\)/g)) {
        for (const arg of call[1]!.matchAll(/'([^']+)'/g)) commands.add(arg[1]!)
      }
    }
    expect(commands.size).toBeGreaterThan(5)
    const listed = systemPackages()
    // CHROMIUM by its name: scripts/without-system-packages.sh points it where no browser is.
    expect([...commands, basename(CHROMIUM)].filter((c) => !listed.has(c))).toEqual([])
  })
})
