import { execFileSync, spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { expect, it } from 'vitest'

const repo = join(import.meta.dirname, '../..')
const INSTALLING = 'nocturn: installing the dependencies with npm ci'

/**
 * A fresh clone of this checkout, with its uncommitted and new files as a commit would carry
 * them (none in CI): no node_modules, no dist, no var.
 */
function freshClone(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-fresh-')), 'nocturn')
  execFileSync('git', ['clone', '--quiet', repo, dir])
  const changed = execFileSync(
    'git',
    ['ls-files', '-z', '--modified', '--others', '--exclude-standard'],
    { cwd: repo, encoding: 'utf8' },
  )
  for (const file of changed.split('\0').filter(Boolean)) {
    const to = join(dir, file)
    if (!existsSync(join(repo, file))) {
      rmSync(to, { force: true })
      continue
    }
    mkdirSync(dirname(to), { recursive: true })
    copyFileSync(join(repo, file), to)
  }
  return dir
}

/** This run's environment without what npm and vitest set for it, so the clone's run is its own. */
function ownEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|NOCTURN_SYSTEM_SKIPS|NOCTURN_TEST_FILE)/.test(key)) continue
    if (key === 'TEST' || key === 'NODE_ENV') continue
    env[key] = value
  }
  // The packages come from this machine's npm cache when it has them (after .ci/run's install,
  // it has all of them); plain text for the assertions.
  return { ...env, npm_config_prefer_offline: 'true', NO_COLOR: '1', FORCE_COLOR: '0' }
}

/** Runs a command in its own process group; a hang ends the whole group, not just npm. */
function run(cwd: string, args: string[], limitMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    // Niced: the install compiles native modules beside the suite's timing-sensitive tests.
    const child = spawn('nice', ['-n', '10', 'npm', ...args], {
      cwd,
      env: ownEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString()
    })
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      reject(new Error(`npm ${args.join(' ')} still running after ${limitMs} ms:\n${out}`))
    }, limitMs)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code: code ?? -1, out })
    })
  })
}

// Bounds for a hang, not for speed: on a quiet machine the install takes a minute or two and the
// whole test about four; with seven other installs on two cores, the install alone took 13.
const MINUTE = 60_000

it('on a fresh clone, npm start installs the dependencies once and plays the scene; npm test then installs nothing and runs vitest', {
  timeout: 50 * MINUTE,
}, async () => {
  const dir = freshClone()
  try {
    expect(existsSync(join(dir, 'node_modules'))).toBe(false)
    const start = await run(dir, ['start'], 30 * MINUTE)
    expect(start.code, start.out).toBe(0)
    const installs = start.out.split('\n').filter((l) => l.startsWith(INSTALLING))
    expect(installs).toEqual([`${INSTALLING} (dependencies not installed)`])
    expect(start.out).toMatch(/Read it again: node dist\/app\/cli.js transcripts show/)
    expect(start.out).not.toContain('did not play as scripted')
    const hidden = join(dir, 'node_modules/.package-lock.json')
    const installed = statSync(hidden)

    // One small test file: the hand-off to vitest with the command's arguments, after the type
    // check and lint of the whole clone. The whole suite is what the run around this one is.
    const test = await run(dir, ['test', '--', 'test/core/gate.test.ts'], 15 * MINUTE)
    expect(test.code, test.out).toBe(0)
    expect(test.out).not.toContain(INSTALLING)
    expect(test.out).toMatch(/Test Files\s+1 passed \(1\)/)
    const after = statSync(hidden)
    expect({ ino: after.ino, mtimeMs: after.mtimeMs }).toEqual({
      ino: installed.ino,
      mtimeMs: installed.mtimeMs,
    })
  } finally {
    rmSync(dirname(dir), { recursive: true, force: true })
  }
})
