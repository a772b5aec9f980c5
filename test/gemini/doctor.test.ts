import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { checkAccount } from '../../src/adapters/gemini/account-check.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { KEY } from './helpers.js'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')
let server: FakeLiveServer
beforeAll(async () => {
  server = await FakeLiveServer.start({ apiKey: KEY })
})
afterAll(async () => server.close())

/** The real command, in its own process, as a person would run it (the key only in the env). */
async function doctor(args: string[], env: Record<string, string> = { GEMINI_API_KEY: KEY }) {
  const cleanEnv = {
    ...process.env,
    GEMINI_API_KEY: '',
    GEMINI_API_KEY_FILE: '',
    GOOGLE_API_KEY: '',
    NOCTURN_CONFIG: '',
    ...env,
  }
  try {
    const r = await run(
      process.execPath,
      ['--import', 'tsx', 'src/app/cli.ts', 'doctor', ...args],
      {
        cwd: ROOT,
        env: cleanEnv,
      },
    )
    return { code: 0, stdout: r.stdout, stderr: r.stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('nocturn doctor against the fake server', () => {
  it('prints which live models exist and which support asynchronous calls', async () => {
    const r = await doctor(['--base-url', server.baseUrl, '--model', 'gemini-3.8-live'])
    expect(r.code).toBe(0)
    const lines = r.stdout.split('\n')
    // Without a configuration the device checks skip and the Gemini settings come from env/flags.
    expect(lines[0]).toMatch(/^ok +node +Node \d+\./)
    expect(lines.find((l) => / config /.test(l))).toMatch(
      /^skip +config +no configuration .*reading the Gemini settings from the environment$/,
    )
    const at = lines.findIndex((l) => /Gemini API key/.test(l))
    expect(lines[at]).toMatch(/^ok +Gemini API key +set, from GEMINI_API_KEY$/)
    expect(lines[at + 1]).toMatch(
      /^ok +Gemini live models +5 live models, 3 with asynchronous calls$/,
    )
    const row = (id: string) => lines.find((l) => l.trim().startsWith(`${id} `))
    expect(row('gemini-3.8-live')).toMatch(/async calls: yes/)
    expect(row('gemini-3.8-live-extended-thinking')).toMatch(/async calls: yes/)
    expect(row('gemini-2.5-flash-native-audio-preview-12-2025')).toMatch(/async calls: yes/)
    expect(row('gemini-3.1-flash-live-preview')).toMatch(/async calls: no .*synchronous calls only/)
    expect(row('gemini-3.5-live-translate-preview')).toMatch(/async calls: no/)
    expect(r.stdout).not.toContain('gemini-3.5-flash ') // not a live model
    expect(r.stdout).toMatch(/ok +Gemini live connect +gemini-3\.8-live: setup complete in \d+ ms/)
    expect(r.stdout + r.stderr).not.toContain(KEY)
  })

  it('--json is for programs; a synchronous model is a warning that says approvals are dead air', async () => {
    const r = await doctor([
      '--json',
      '--base-url',
      server.baseUrl,
      '--model',
      'gemini-3.1-flash-live-preview',
    ])
    expect(r.code).toBe(0)
    const report = JSON.parse(r.stdout) as {
      ok: boolean
      checks: { name: string; status: string; details?: string[]; data?: unknown }[]
    }
    expect(report.ok).toBe(true)
    const models = report.checks.find((c) => c.name === 'Gemini live models')
    const data = models?.data as { id: string; asyncToolCalls: boolean }[]
    expect(data.map((m) => [m.id, m.asyncToolCalls])).toEqual([
      ['gemini-3.8-live', true],
      ['gemini-3.8-live-extended-thinking', true],
      ['gemini-3.1-flash-live-preview', false],
      ['gemini-2.5-flash-native-audio-preview-12-2025', true],
      ['gemini-3.5-live-translate-preview', false],
    ])
    const connect = report.checks.find((c) => c.name === 'Gemini live connect')
    expect(connect?.status).toBe('warn')
    expect(connect?.details?.join('\n')).toMatch(/approvals dead air/)
  })

  it('a model the account does not have fails the connect check and says so', async () => {
    const r = await doctor(['--base-url', server.baseUrl, '--model', 'gemini-live-nope'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(
      /fail +Gemini live connect +gemini-live-nope: the live model "gemini-live-nope" does not exist/,
    )
    expect(r.stdout).toMatch(/the account does not list this model/)
  })

  it('reads the key from GEMINI_API_KEY_FILE; a wrong key fails the listing without printing it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-doctor-'))
    writeFileSync(join(dir, 'key'), `${KEY}\n`, { mode: 0o600 })
    const ok = await doctor(['--base-url', server.baseUrl], {
      GEMINI_API_KEY_FILE: join(dir, 'key'),
    })
    expect(ok.stdout).toMatch(/ok +Gemini API key +set, from GEMINI_API_KEY_FILE/)
    expect(ok.stdout).toMatch(/skip +Gemini live connect +no model configured/)
    const wrong = 'AIzaWRONG-key-9876543210'
    const bad = await doctor(['--base-url', server.baseUrl], { GEMINI_API_KEY: wrong })
    expect(bad.code).toBe(1)
    expect(bad.stdout).toMatch(/fail +Gemini live models +cannot list models: .*API key not valid/)
    expect(bad.stdout + bad.stderr).not.toContain(wrong)
  })

  it('without a key: fails plainly and skips what needs one', async () => {
    const r = await doctor(['--base-url', server.baseUrl, '--model', 'gemini-3.8-live'], {})
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/fail +Gemini API key +not set: export GEMINI_API_KEY/)
    expect(r.stdout).toMatch(/skip +Gemini live models +no API key/)
  })
})

describe('checkAccount', () => {
  it('walks every page of models.list through the SDK and keeps the bidiGenerateContent ones', async () => {
    const before = server.rest.length
    const report = await checkAccount({
      apiKey: KEY,
      baseUrl: server.baseUrl,
      pageSize: 2,
      logger: silentLogger,
      clock: realClock(),
    })
    expect(report.modelCount).toBe(7)
    expect(report.liveModels.map((m) => m.id)).toHaveLength(5)
    const calls = server.rest.slice(before)
    expect(calls.map((c) => [c.method, c.path, c.query.pageToken])).toEqual([
      ['GET', '/v1beta/models', undefined],
      ['GET', '/v1beta/models', '2'],
      ['GET', '/v1beta/models', '4'],
      ['GET', '/v1beta/models', '6'],
    ])
    expect(calls.every((c) => c.hadKey)).toBe(true)
  })
})
