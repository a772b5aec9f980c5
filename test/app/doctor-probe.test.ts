import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { PROBE_TOOL } from '../../src/adapters/live-support/tool-call-probe.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { KEY, probeScript } from '../gemini/helpers.js'
import { OPENAI_KEY } from '../openai/helpers.js'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '..', '..')
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of closers.splice(0)) await c()
})

/** The real command in its own process, as a person runs it; keys only in the environment. */
function doctorProbe(provider: 'gemini' | 'openai', baseUrl: string, model: string) {
  return doctor(['--probe', '--provider', provider, '--base-url', baseUrl, '--model', model])
}

async function doctor(args: string[]) {
  const env = {
    ...process.env,
    GEMINI_API_KEY: KEY,
    GEMINI_API_KEY_FILE: '',
    GOOGLE_API_KEY: '',
    OPENAI_API_KEY: OPENAI_KEY,
    OPENAI_API_KEY_FILE: '',
    OPENAI_BASE_URL: '',
    NOCTURN_CONFIG: '',
  }
  try {
    const r = await run(
      process.execPath,
      ['--import', 'tsx', 'src/app/cli.ts', 'doctor', ...args],
      {
        cwd: ROOT,
        env,
      },
    )
    return { code: 0, stdout: r.stdout, stderr: r.stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

async function geminiFake(toolCalls: 'async' | 'blocking'): Promise<string> {
  const s = await FakeLiveServer.start({ apiKey: KEY, scripts: probeScript, toolCalls })
  closers.push(() => s.close())
  return s.baseUrl
}

async function openaiFake(toolCalls: 'async' | 'blocking'): Promise<string> {
  const replies = [{ calls: [{ name: PROBE_TOOL }] }, { text: 'Still here.' }]
  const s = await FakeRealtimeServer.start({ apiKey: OPENAI_KEY, replies, toolCalls })
  closers.push(() => s.close())
  return s.baseUrl
}

describe('nocturn doctor --probe tells an asynchronous model from a sequential one, for each provider', () => {
  it('Gemini: a model that keeps talking is asynchronous, as the table says; the cost is said first', async () => {
    const r = await doctorProbe('gemini', await geminiFake('async'), 'gemini-3.8-live')
    expect(r.stderr).toMatch(/^doctor --probe: opening one short session .*billed to the account/m)
    expect(r.stdout).toMatch(
      /ok +Gemini probe +gemini-3.8-live: asynchronous \(a call held \d+ s without its output\), as the capability table says/,
    )
    expect(r.stdout + r.stderr).not.toContain(KEY)
  })

  it('Gemini: a model that falls silent is sequential; against a table that claims asynchronous, it warns loudly', async () => {
    const r = await doctorProbe('gemini', await geminiFake('blocking'), 'gemini-3.8-live')
    expect(r.stdout).toMatch(
      /warn +Gemini probe +gemini-3.8-live: sequential .*the capability table says asynchronous: THEY DIFFER/,
    )
    expect(r.stdout).toMatch(/every approval will be dead air on this model/)
  })

  it('Gemini: a sequential model the table knows as sequential warns that approvals are dead air', async () => {
    const model = 'gemini-3.1-flash-live-preview'
    const r = await doctorProbe('gemini', await geminiFake('blocking'), model)
    expect(r.stdout).toMatch(
      /warn +Gemini probe +gemini-3.1-flash-live-preview: sequential .*, as the capability table says/,
    )
    expect(r.stdout).toMatch(/approvals will be dead air on this model/)
  })

  it('OpenAI: the same probe on the Realtime fake, asynchronous and then sequential against the table', async () => {
    const ok = await doctorProbe('openai', await openaiFake('async'), 'gpt-realtime')
    expect(ok.stdout).toMatch(
      /ok +OpenAI probe +gpt-realtime: asynchronous .*as the capability table says/,
    )
    const differ = await doctorProbe('openai', await openaiFake('blocking'), 'gpt-realtime')
    expect(differ.stdout).toMatch(
      /warn +OpenAI probe +gpt-realtime: sequential .*the capability table says asynchronous: THEY DIFFER/,
    )
    expect(differ.stdout + differ.stderr).not.toContain(OPENAI_KEY)
  })
})

describe('nocturn doctor with a list of providers checks and probes each, in order', () => {
  it('Gemini then OpenAI: both keys, model lists, models and probes, each line labelled by its place', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-doctor-providers-'))
    closers.push(async () => rmSync(dir, { recursive: true, force: true }))
    const config = join(dir, 'config.json')
    const providers = [
      { kind: 'gemini', model: 'gemini-3.8-live', baseUrl: await geminiFake('async') },
      { kind: 'openai', model: 'gpt-realtime', baseUrl: await openaiFake('blocking') },
    ]
    writeFileSync(config, JSON.stringify({ provider: providers, panel: { backend: 'none' } }))
    const r = await doctor(['--probe', '--config', config])
    const lines = r.stdout.split('\n')
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l))
    // The cost is said first, naming every session it will open.
    expect(r.stderr).toMatch(
      /^doctor --probe: opening one short session with each of the 2 configured providers' live models in turn \(provider\[0\] gemini, provider\[1\] openai; .*billed to the account/m,
    )
    expect(r.stdout).toMatch(/^ok +provider\[0\] Gemini API key +set, from environment$/m)
    expect(r.stdout).toMatch(/^ok +provider\[0\] Gemini live models +\d+ live models/m)
    expect(r.stdout).toMatch(
      /^ok +provider\[0\] Gemini model +gemini-3.8-live: listed by the account/m,
    )
    expect(r.stdout).toMatch(/^ok +provider\[1\] OpenAI API key +set, from environment$/m)
    expect(r.stdout).toMatch(/^ok +provider\[1\] OpenAI realtime models +\d+ realtime models/m)
    expect(r.stdout).toMatch(
      /^ok +provider\[1\] OpenAI model +gpt-realtime: listed by the account/m,
    )
    // Each probed on its own fake: the first keeps talking, the second falls silent.
    expect(r.stdout).toMatch(
      /^ok +provider\[0\] Gemini probe +gemini-3.8-live: asynchronous .*as the capability table says/m,
    )
    expect(r.stdout).toMatch(
      /^warn +provider\[1\] OpenAI probe +gpt-realtime: sequential .*THEY DIFFER/m,
    )
    // In the configured order.
    expect(at(/provider\[0\] Gemini probe/)).toBeLessThan(at(/provider\[1\] OpenAI API key/))
    expect(r.stdout + r.stderr).not.toContain(KEY)
    expect(r.stdout + r.stderr).not.toContain(OPENAI_KEY)
  })
})
