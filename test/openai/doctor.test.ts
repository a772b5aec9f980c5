import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROBE_TOOL } from '../../src/adapters/live-support/tool-call-probe.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { OPENAI_KEY } from './helpers.js'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')
let server: FakeRealtimeServer
beforeAll(async () => {
  server = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY })
})
afterAll(async () => server.close())

/** The real command in its own process, the key only in the environment. */
async function doctor(args: string[], key = OPENAI_KEY) {
  const env = {
    ...process.env,
    OPENAI_API_KEY: key,
    OPENAI_API_KEY_FILE: '',
    OPENAI_BASE_URL: '',
    NOCTURN_CONFIG: '',
  }
  try {
    const r = await run(
      process.execPath,
      ['--import', 'tsx', 'src/app/cli.ts', 'doctor', '--provider', 'openai', ...args],
      { cwd: ROOT, env },
    )
    return { code: 0, stdout: r.stdout, stderr: r.stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('nocturn doctor --provider openai against the fake Realtime service', () => {
  it('lists the account’s realtime models with the capability table’s view, and checks the configured one', async () => {
    const r = await doctor(['--base-url', server.baseUrl, '--model', 'gpt-realtime'])
    const lines = r.stdout.split('\n')
    const at = lines.findIndex((l) => /OpenAI API key/.test(l))
    expect(lines[at]).toMatch(/^ok +OpenAI API key +set, from OPENAI_API_KEY$/)
    expect(lines[at + 1]).toMatch(
      /^ok +OpenAI realtime models +4 realtime models, 3 with asynchronous calls$/,
    )
    expect(r.stdout).toMatch(/gpt-4o-realtime-preview-2025-06-03 +async calls: no/)
    expect(r.stdout).toMatch(
      /ok +OpenAI model +gpt-realtime: listed by the account, asynchronous calls yes/,
    )
    expect(r.stdout).not.toContain(OPENAI_KEY)
    expect(r.stdout).not.toMatch(/Gemini (API key|live models|model)/)
  })

  it('a model the account does not have fails, naming the fix; a preview warns that approvals are dead air', async () => {
    const missing = await doctor(['--base-url', server.baseUrl, '--model', 'gpt-realtime-2.1'])
    expect(missing.code).toBe(1)
    expect(missing.stdout).toMatch(
      /fail +OpenAI model +gpt-realtime-2.1: the account does not list/,
    )
    const preview = await doctor([
      '--base-url',
      server.baseUrl,
      '--model',
      'gpt-4o-realtime-preview-2025-06-03',
    ])
    expect(preview.stdout).toMatch(/warn +OpenAI model .*asynchronous calls no/)
    expect(preview.stdout).toContain('approvals dead air')
  })

  it('a refused key fails the model listing, and the key is never printed', async () => {
    const r = await doctor(['--base-url', server.baseUrl], 'sk-wrong-key-0123456789')
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/fail +OpenAI realtime models +cannot list models: .*401/)
    expect(r.stdout).not.toContain('sk-wrong-key-0123456789')
  })

  it('--probe says first that it uses the account, then tells what the model did beside what the table claims', async () => {
    const probed = await FakeRealtimeServer.start({
      apiKey: OPENAI_KEY,
      replies: [{ calls: [{ name: PROBE_TOOL }] }, { text: 'Still here.' }],
    })
    try {
      const r = await doctor(['--probe', '--base-url', probed.baseUrl, '--model', 'gpt-realtime'])
      expect(r.stderr).toContain('doctor --probe: opening one short session')
      expect(r.stdout).toMatch(
        /ok +OpenAI probe +gpt-realtime: asynchronous .*as the capability table says/,
      )
      // The table says the preview waits; this (fake) one kept talking: said loudly.
      const differ = await doctor([
        '--probe',
        '--base-url',
        probed.baseUrl,
        '--model',
        'gpt-4o-realtime-preview-2025-06-03',
      ])
      expect(differ.stdout).toMatch(/warn +OpenAI probe +.*asynchronous .*THEY DIFFER/)
    } finally {
      await probed.close()
    }
  })
})
