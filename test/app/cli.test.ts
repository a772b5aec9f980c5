import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { COMMANDS } from '../../src/app/commands/index.js'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '../..')
const cli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'src/app/cli.ts', ...args], { cwd: ROOT }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  )

it('every command answers --help with its usage and exit 0, without running', async () => {
  const names = Object.keys(COMMANDS)
  expect(names).toEqual(
    expect.arrayContaining(['run', 'doctor', 'devices', 'pair', 'phone', 'transcripts', 'config']),
  )
  const results = await Promise.all(names.map((n) => cli(n, '--help')))
  names.forEach((n, i) => {
    expect(results[i]?.code, n).toBe(0)
    expect(results[i]?.stdout, n).toMatch(new RegExp(`^usage:\\s+nocturn ${n} `))
  })
}, 60_000)

it("--help prints the command's own usage text, every option and variable in it", async () => {
  const [pair, transcripts, enroll] = await Promise.all([
    cli('pair', '--help'),
    cli('transcripts', '--help'),
    cli('wake', 'enroll', '--help'),
  ])
  for (const o of ['--config', '--app-host', '--app-port', '--app-https', 'NOCTURN_APP_HOST']) {
    expect(pair.stdout).toContain(o)
  }
  expect(pair.stdout).toContain('phonesDir')
  expect(transcripts.stdout).toMatch(/^usage: nocturn transcripts list \[--config <path>\]/)
  expect(transcripts.stdout).toContain('store.path')
  expect(enroll.stdout).toMatch(/^usage: nocturn wake enroll /)
  expect(enroll.stdout).toContain('--gate')
  expect(enroll.stdout).toContain('--near-misses')
  for (const r of [pair, transcripts, enroll]) expect(r.code).toBe(0)
}, 60_000)

it('an unknown command says so and lists the commands, exit 2', async () => {
  const r = await cli('frobnicate')
  expect(r.code).toBe(2)
  expect(r.stderr).toContain('unknown command "frobnicate"')
  expect(r.stderr).toContain('  run ')
})
