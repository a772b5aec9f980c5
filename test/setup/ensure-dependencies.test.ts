import { spawnSync } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

const repo = join(import.meta.dirname, '../..')
const script = join(repo, 'scripts/ensure-dependencies.mjs')
const INSTALLING = 'nocturn: installing the dependencies with npm ci'

/**
 * A checkout with a small lockfile and a fake npm (npm_execpath, as npm sets it for a script):
 * the fake notes each call, then installs as npm ci does — the packages' folders and
 * node_modules/.package-lock.json with their entries — or fails the way npm does.
 */
function checkout(packages: Record<string, object>) {
  const root = mkdtempSync(join(tmpdir(), 'nocturn-ensure-'))
  mkdirSync(join(root, 'scripts'))
  copyFileSync(script, join(root, 'scripts/ensure-dependencies.mjs'))
  const lock = (p: Record<string, object>) =>
    writeFileSync(
      join(root, 'package-lock.json'),
      JSON.stringify({ name: 'x', lockfileVersion: 3, packages: { '': {}, ...p } }),
    )
  lock(packages)
  const calls = join(root, 'npm-calls')
  writeFileSync(
    join(root, 'fake-npm.mjs'),
    `import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
appendFileSync(${JSON.stringify(calls)}, process.argv.slice(2).join(' ') + '\\n')
if (process.env.FAKE_NPM_FAIL) {
  console.error('npm error code E404 (the fake registry has no such package)')
  process.exit(1)
}
const { packages } = JSON.parse(readFileSync('package-lock.json', 'utf8'))
delete packages['']
rmSync('node_modules', { recursive: true, force: true })
for (const [path, entry] of Object.entries(packages)) {
  if (entry.os) delete packages[path]
  else mkdirSync(path, { recursive: true })
}
writeFileSync('node_modules/.package-lock.json', JSON.stringify({ packages }))
`,
  )
  const run = (env: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync(process.execPath, ['scripts/ensure-dependencies.mjs'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, npm_execpath: join(root, 'fake-npm.mjs'), ...env },
    })
    const made = existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean) : []
    rmSync(calls, { force: true })
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, npmCalls: made }
  }
  return { root, lock, run }
}

const PACKAGES = {
  'node_modules/a': { version: '1.0.0', integrity: 'sha512-a' },
  'node_modules/a/node_modules/b': { version: '2.0.0', dev: true },
  // Another platform's binary: npm ci leaves it out, and that is no reason to install again.
  'node_modules/c-darwin': { version: '3.0.0', optional: true, os: ['darwin'] },
}

let roots: string[] = []
afterEach(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true })
  roots = []
})
function tracked(packages: Record<string, object>) {
  const c = checkout(packages)
  roots.push(c.root)
  return c
}

describe('npm start and npm test install the dependencies when they are not the locked ones', () => {
  it('a fresh clone installs once, in one line; the next run installs nothing and says nothing', () => {
    const c = tracked(PACKAGES)
    const first = c.run()
    expect(first.status).toBe(0)
    expect(first.npmCalls).toEqual(['ci --no-audit --no-fund'])
    expect(first.stdout).toBe(`${INSTALLING} (dependencies not installed)\n`)
    const second = c.run()
    expect(second).toMatchObject({ status: 0, stdout: '', stderr: '', npmCalls: [] })
  })

  it('a lockfile that moved on (another version) installs again', () => {
    const c = tracked(PACKAGES)
    c.run()
    c.lock({ ...PACKAGES, 'node_modules/a': { version: '1.1.0', integrity: 'sha512-a2' } })
    const r = c.run()
    expect(r.npmCalls).toEqual(['ci --no-audit --no-fund'])
    expect(r.stdout).toContain('node_modules/a differs from package-lock.json')
    expect(c.run().npmCalls).toEqual([])
  })

  it('an installed entry that records less metadata than the lockfile (an older npm) is current', () => {
    const locked = {
      ...PACKAGES,
      'node_modules/e-linux': {
        version: '5.0.0',
        integrity: 'sha512-e',
        license: 'MIT',
        optional: true,
        os: ['linux'],
        cpu: ['arm64'],
        libc: ['glibc'],
      },
    }
    const c = tracked(locked)
    c.run()
    // What npm 10 writes for it: the same package, without the fields it does not record.
    const hidden = join(c.root, 'node_modules/.package-lock.json')
    const { packages } = JSON.parse(readFileSync(hidden, 'utf8'))
    mkdirSync(join(c.root, 'node_modules/e-linux'), { recursive: true })
    packages['node_modules/e-linux'] = { version: '5.0.0', integrity: 'sha512-e', optional: true }
    writeFileSync(hidden, JSON.stringify({ packages }))
    expect(c.run()).toMatchObject({ status: 0, stdout: '', npmCalls: [] })
    // Another build of it is not.
    packages['node_modules/e-linux'] = { version: '5.0.0', integrity: 'sha512-other' }
    writeFileSync(hidden, JSON.stringify({ packages }))
    expect(c.run().stdout).toContain('node_modules/e-linux differs from package-lock.json')
  })

  it('a link into an optional package that did not build (naudiodon without PortAudio) is no reason to install again', () => {
    const c = tracked({
      ...PACKAGES,
      'node_modules/f-native': { version: '6.0.0', optional: true, os: ['none'] },
      'node_modules/f-native/vendor/stand-in': { optional: true, os: ['none'] },
      'node_modules/stand-in': { resolved: 'node_modules/f-native/vendor/stand-in', link: true },
    })
    c.run()
    // What npm leaves when the optional package failed to build: neither it nor the link to it.
    const hidden = join(c.root, 'node_modules/.package-lock.json')
    const { packages } = JSON.parse(readFileSync(hidden, 'utf8'))
    delete packages['node_modules/stand-in']
    rmSync(join(c.root, 'node_modules/stand-in'), { recursive: true, force: true })
    writeFileSync(hidden, JSON.stringify({ packages }))
    expect(c.run()).toMatchObject({ status: 0, stdout: '', npmCalls: [] })
  })

  it('a package the lockfile gained, or a folder someone deleted, installs again', () => {
    const c = tracked(PACKAGES)
    c.run()
    c.lock({ ...PACKAGES, 'node_modules/d': { version: '4.0.0' } })
    expect(c.run().stdout).toContain('node_modules/d is not installed')
    rmSync(join(c.root, 'node_modules/a/node_modules/b'), { recursive: true })
    expect(c.run().stdout).toContain('node_modules/a/node_modules/b is missing')
    expect(c.run().npmCalls).toEqual([])
  })

  it("a failed install stops with npm's message and exit code, and no stack trace of ours", () => {
    const c = tracked(PACKAGES)
    const r = c.run({ FAKE_NPM_FAIL: '1' })
    expect(r.status).toBe(1)
    expect(r.stderr).toBe('npm error code E404 (the fake registry has no such package)\n')
    expect(r.stdout).toBe(`${INSTALLING} (dependencies not installed)\n`)
  })

  it("this checkout's node_modules, installed by npm ci, is current", () => {
    const r = spawnSync(process.execPath, [script], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, npm_execpath: join(repo, 'no-such-npm.js') },
    })
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    })
  })
})
