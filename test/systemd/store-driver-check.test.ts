import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')
const CHECK = join(ROOT, 'scripts', 'check-store-driver.mjs')

// npm ci's postinstall: better-sqlite3 is optional to npm only so that a Pi without a compiler
// gets this message instead of node-gyp's output; the install must still fail there.
describe('scripts/check-store-driver.mjs (postinstall)', () => {
  it('passes where the store driver loads', () => {
    const r = spawnSync(process.execPath, [CHECK], { cwd: ROOT, encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toBe('')
  })

  it('fails with the missing tools and the fix where the driver did not build', () => {
    // A copy outside the checkout finds no node_modules; a PATH of one empty folder has no tools.
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-driver-'))
    copyFileSync(CHECK, join(dir, 'check-store-driver.mjs'))
    const r = spawnSync(process.execPath, [join(dir, 'check-store-driver.mjs')], {
      cwd: dir,
      env: { PATH: join(dir, 'bin') },
      encoding: 'utf8',
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('better-sqlite3')
    expect(r.stderr).toContain('Missing build tools: make, g++, python3')
    expect(r.stderr).toContain('sudo apt install build-essential python3, then npm ci again')
    expect(r.stderr).not.toContain('gyp ERR!')
  })
})
