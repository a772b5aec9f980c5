import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { release, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { KEY } from '../gemini/helpers.js'
import { type HermeticAlsa, hermeticAlsa } from '../helpers/alsa.js'
import { freePort, mosquittoBroker, type TestBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'

/**
 * `nocturn doctor --config …` as a person runs it: the real command in a child process, against a
 * configuration that points at the fake Live server, a real Mosquitto with a password file, a
 * hermetic ALSA world and a panel. Asserts on the lines, the exit code and the --json shape.
 */
const ROOT = join(import.meta.dirname, '..', '..')
const run = promisify(execFile)
const skip = missingCommands('mosquitto', 'mosquitto_passwd', 'arecord', 'aplay', 'mkfifo')
const WRONG = 'not-the-password-42'
const kernel66 = (() => {
  const m = /^(\d+)\.(\d+)/.exec(release())
  return !m || Number(m[1]) > 6 || (Number(m[1]) === 6 && Number(m[2]) >= 6)
})()

let server: FakeLiveServer
let broker: TestBroker
let alsa: HermeticAlsa
let dir: string
let nowherePort: number

beforeAll(async () => {
  if (skip) return
  dir = mkdtempSync(join(tmpdir(), 'nocturn-doctor-'))
  server = await FakeLiveServer.start({ apiKey: KEY })
  broker = mosquittoBroker(await freePort())
  nowherePort = await freePort()
  await broker.start()
  // One second of silence: arecord -d 1 reads exactly this much from the file PCM.
  alsa = hermeticAlsa(Buffer.alloc(32_000), { stall: false })
  writeFileSync(join(dir, 'mqtt-right'), `${USERS.device.password}\n`, { mode: 0o600 })
  writeFileSync(join(dir, 'mqtt-wrong'), `${WRONG}\n`, { mode: 0o600 })
  new PhoneKeyStore(join(dir, 'phones-one')).add('anna', 'Anna')
}, 60_000)

afterAll(async () => {
  if (skip) return
  await broker?.stop()
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Setup {
  name: string
  audio?: Record<string, unknown>
  panel?: Record<string, unknown>
  mqtt?: 'right' | 'wrong' | 'none' | 'nowhere'
  phones?: 'one' | 'none'
  model?: string
  raw?: string
  /** The folder the config file is written in (default: the run's). */
  in?: string
}

function writeConfig(s: Setup): string {
  const path = join(s.in ?? dir, `${s.name}.json`)
  if (s.raw !== undefined) {
    writeFileSync(path, s.raw)
    return path
  }
  const config = {
    provider: { model: s.model ?? 'gemini-3.8-live', baseUrl: server.baseUrl },
    audio: s.audio ?? { backend: 'alsa', capturePcm: alsa.capture, playbackPcm: alsa.playback },
    panel: s.panel ?? { backend: 'none' },
    ...(s.mqtt !== 'none' && {
      mqtt: {
        url: s.mqtt === 'nowhere' ? `mqtt://127.0.0.1:${nowherePort}` : broker.url,
        username: USERS.device.username,
        passwordFile: join(dir, s.mqtt === 'wrong' ? 'mqtt-wrong' : 'mqtt-right'),
        deviceId: 'kitchen',
      },
    }),
    phonesDir: join(dir, s.phones === 'none' ? 'phones-none' : 'phones-one'),
    store: { path: join(dir, 'nocturn.db') },
  }
  writeFileSync(path, `// written by the test\n${JSON.stringify(config, null, 2)}\n`)
  return path
}

async function doctor(
  setup: Setup,
  args: string[] = [],
  extraEnv: Record<string, string> = {},
  viaEnv = false,
) {
  const env = {
    ...alsa.env,
    // The key only in the environment, as the unit's credential would be; nothing else leaks in.
    GEMINI_API_KEY: KEY,
    GEMINI_API_KEY_FILE: '',
    NOCTURN_MQTT_PASSWORD: '',
    NOCTURN_MQTT_PASSWORD_FILE: '',
    NOCTURN_MQTT_USERNAME: '',
    CREDENTIALS_DIRECTORY: '',
    NOCTURN_CONFIG: '',
    NOCTURN_GEMINI_BASE_URL: '',
    NOCTURN_GEMINI_MODEL: '',
    ...extraEnv,
  }
  const path = writeConfig(setup)
  // NOCTURN_CONFIG names the configuration as well as --config does (the unit sets neither).
  if (viaEnv) env.NOCTURN_CONFIG = path
  const cmd = ['--import', 'tsx', 'src/app/cli.ts', 'doctor', ...(viaEnv ? [] : ['--config', path])]
  try {
    const r = await run(process.execPath, [...cmd, ...args], { cwd: ROOT, env })
    return { code: 0, stdout: r.stdout, stderr: r.stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** The check's first line: "status name  summary". */
function line(stdout: string, name: string): string {
  const re = new RegExp(`^(ok|warn|fail|skip) +${name}  `)
  return stdout.split('\n').find((l) => re.test(l)) ?? `(no ${name} line)`
}

/** The check's indented detail lines. */
function details(stdout: string, name: string): string {
  const lines = stdout.split('\n')
  const at = lines.indexOf(line(stdout, name))
  const out: string[] = []
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith(' ')) break
    out.push(l.trim())
  }
  return out.join('\n')
}

function noSecrets(r: { stdout: string; stderr: string }): void {
  const all = r.stdout + r.stderr
  expect(all).not.toContain(KEY)
  expect(all).not.toContain(USERS.device.password)
  expect(all).not.toContain(WRONG)
}

describe.skipIf(skip)('nocturn doctor --config: the whole device', () => {
  it('everything in place: every check ok, exit 0', async () => {
    const asked = server.rest.length
    const r = await doctor({ name: 'good' })
    expect(r.code).toBe(0)
    // The base URL came from the configuration: the fake server was asked for the models.
    expect(server.rest.slice(asked).some((c) => c.path === '/v1beta/models')).toBe(true)
    expect(line(r.stdout, 'config')).toMatch(/^ok +config +\S+good\.json is valid$/)
    expect(details(r.stdout, 'config')).toBe(
      'API key from: environment; MQTT password from: config file',
    )
    expect(line(r.stdout, 'audio')).toMatch(
      /^ok +audio +capture "nocturn_cap" and playback "nocturn_play" open$/,
    )
    expect(line(r.stdout, 'panel')).toMatch(/^ok +panel +panel\.backend "none"; this board needs/)
    expect(line(r.stdout, 'broker')).toMatch(
      new RegExp(
        `^ok +broker +${broker.url.replace(/[.]/g, '\\.')}: reachable, user "nocturn-device" accepted \\(\\d+ ms\\); may write 4 topics it needs$`,
      ),
    )
    expect(line(r.stdout, 'phones')).toMatch(/^ok +phones +1 paired: Anna$/)
    expect(line(r.stdout, 'Gemini API key')).toMatch(/^ok +Gemini API key +set, from environment$/)
    expect(line(r.stdout, 'Gemini live models')).toMatch(/5 live models, 3 with asynchronous calls/)
    expect(line(r.stdout, 'Gemini model')).toMatch(
      /^ok +Gemini model +gemini-3\.8-live: listed by the account, asynchronous calls yes$/,
    )
    expect(line(r.stdout, 'Gemini live connect')).toMatch(/^skip .*--connect opens a short session/)
    noSecrets(r)
  })

  it('a missing PCM, rpi-gpio on this kernel and a wrong broker password: each fails with its fix, exit 1', async () => {
    const r = await doctor({
      name: 'broken',
      audio: { backend: 'alsa', capturePcm: alsa.capture, playbackPcm: 'nocturn_nowhere' },
      panel: { backend: 'rpi-gpio', preset: 'respeaker-2mic', led: 'GPIO12' },
      mqtt: 'wrong',
      phones: 'none',
    })
    expect(r.code).toBe(1)
    expect(line(r.stdout, 'config')).toMatch(/^ok /)
    expect(line(r.stdout, 'audio')).toMatch(/^fail +audio +1 of 2 PCMs open$/)
    const audio = details(r.stdout, 'audio')
    expect(audio).toContain('audio.capturePcm "nocturn_cap": opens for capture')
    expect(audio).toMatch(
      /audio\.playbackPcm "nocturn_nowhere": ALSA has no such PCM — list the names with "nocturn devices".*hardware\/audio\.md/,
    )
    if (kernel66) {
      expect(line(r.stdout, 'panel')).toMatch(
        /^fail +panel +panel\.backend "rpi-gpio", button GPIO17, LED GPIO12; this board needs/,
      )
      expect(details(r.stdout, 'panel')).toMatch(
        /EINVAL[\s\S]*fix: use gpiod: set panel\.backend to "gpiod"/,
      )
    } else {
      expect(line(r.stdout, 'panel')).toMatch(/panel\.backend "rpi-gpio"/)
    }
    expect(line(r.stdout, 'broker')).toMatch(
      /^fail +broker +mqtt:\/\/127\.0\.0\.1:\d+: reachable, but the broker refused user "nocturn-device" \((Bad username or password|Not authorized)\)$/,
    )
    expect(details(r.stdout, 'broker')).toMatch(
      /fix: check mqtt\.username and the password \(from: config file\)/,
    )
    expect(line(r.stdout, 'phones')).toMatch(
      /^warn +phones +no phone paired: .*run "nocturn pair"$/,
    )
    // The Gemini checks still ran: one failing check never stops the others.
    expect(line(r.stdout, 'Gemini live models')).toMatch(/^ok /)
    noSecrets(r)
  })

  it('--json: one object with ok and every check by name; a synchronous model warns of dead air', async () => {
    const r = await doctor(
      { name: 'json', mqtt: 'wrong', model: 'gemini-3.1-flash-live-preview' },
      ['--json', '--connect'],
    )
    expect(r.code).toBe(1)
    const report = JSON.parse(r.stdout) as {
      ok: boolean
      checks: {
        name: string
        status: string
        summary: string
        details?: string[]
        data?: unknown
      }[]
    }
    expect(report.ok).toBe(false)
    expect(report.checks.map((c) => [c.name, c.status])).toEqual([
      ['node', 'ok'],
      ['config', 'ok'],
      ['audio', 'ok'],
      ['panel', 'ok'],
      ['spi', 'skip'],
      ['broker', 'fail'],
      ['phones', 'ok'],
      // Built or not, port 8080 free or not: that depends on the machine (test/app/phone-app.test.ts).
      ['phone app', expect.stringMatching(/^(ok|warn|fail)$/)],
      ['wake word', 'skip'],
      ['home assistant', 'skip'],
      ['Gemini API key', 'ok'],
      ['Gemini live models', 'ok'],
      ['Gemini model', 'warn'],
      ['Gemini live connect', 'warn'],
      // Not asked for: --probe opens a session that costs the account a few seconds.
      ['Gemini probe', 'skip'],
    ])
    for (const c of report.checks) expect(typeof c.summary).toBe('string')
    const broker = report.checks.find((c) => c.name === 'broker')
    expect(broker?.data).toMatchObject({ ok: false, reason: 'auth', username: 'nocturn-device' })
    expect(report.checks.find((c) => c.name === 'audio')?.data).toEqual([
      { key: 'audio.capturePcm', pcm: 'nocturn_cap', status: 'ok' },
      { key: 'audio.playbackPcm', pcm: 'nocturn_play', status: 'ok' },
    ])
    const model = report.checks.find((c) => c.name === 'Gemini model')
    expect(model?.data).toMatchObject({
      model: 'gemini-3.1-flash-live-preview',
      listed: true,
      asyncToolCalls: false,
    })
    expect(model?.details?.join('\n')).toMatch(/approvals dead air/)
    // --connect opened a session to the configured model.
    expect(report.checks.find((c) => c.name === 'Gemini live connect')?.summary).toMatch(
      /^gemini-3\.1-flash-live-preview: setup complete in \d+ ms$/,
    )
    noSecrets(r)
  })

  it('no broker and WAV audio: approvals on the terminal (a warning), audio skipped with the reason', async () => {
    const r = await doctor({
      name: 'wav',
      audio: { backend: 'wav', inputWav: '/tmp/in.wav', outputWav: '/tmp/out.wav' },
      mqtt: 'none',
    })
    expect(r.code).toBe(0)
    expect(line(r.stdout, 'audio')).toMatch(
      /^skip +audio +audio\.backend is "wav": no sound card used/,
    )
    expect(line(r.stdout, 'broker')).toMatch(
      /^warn +broker +not configured: approvals are asked on the terminal, or denied/,
    )
  })

  it('a broker that is not there: unreachable, with the fix; the config found through NOCTURN_CONFIG', async () => {
    const r = await doctor({ name: 'nowhere', mqtt: 'nowhere' }, [], {}, true)
    expect(r.code).toBe(1)
    expect(line(r.stdout, 'config')).toMatch(/^ok +config +\S+nowhere\.json is valid$/)
    expect(line(r.stdout, 'broker')).toMatch(
      /^fail +broker +mqtt:\/\/127\.0\.0\.1:\d+: unreachable \(.*ECONNREFUSED.*\)$/,
    )
    expect(details(r.stdout, 'broker')).toMatch(/fix: is the broker running/)
    noSecrets(r)
  })

  it('run by hand as root: the key in the credentials folder beside the config, as the installer put it; an empty one says where it goes', async () => {
    const etc = join(dir, 'etc')
    mkdirSync(join(etc, 'credentials'), { recursive: true })
    const file = join(etc, 'credentials', 'gemini-api-key')
    writeFileSync(file, `${KEY}\n`, { mode: 0o600 })
    const found = await doctor({ name: 'config', in: etc }, [], { GEMINI_API_KEY: '' })
    expect(line(found.stdout, 'Gemini API key')).toMatch(
      /^ok +Gemini API key +set, from credential$/,
    )
    expect(found.code).toBe(0)
    noSecrets(found)
    // The installer leaves the file empty until the household fills it.
    writeFileSync(file, '')
    const empty = await doctor({ name: 'config', in: etc }, [], { GEMINI_API_KEY: '' })
    expect(empty.code).toBe(1)
    expect(line(empty.stdout, 'Gemini API key')).toContain(
      `not set: put it in ${file} (the service reads it by LoadCredential=)`,
    )
  })

  it('an unusable configuration: the one-line problems, the checks that need it skipped, exit 1', async () => {
    const r = await doctor(
      {
        name: 'bad',
        raw: '{ "panel": { "backend": "gpiod", "button": "GPIO40" }, "mqtt": { "url": "x", "password": "hunter2-secret" } }',
      },
      [],
      // Unusable: the Gemini checks fall back to the environment (never the real service here).
      { NOCTURN_GEMINI_BASE_URL: server.baseUrl },
    )
    expect(r.code).toBe(1)
    expect(line(r.stdout, 'config')).toMatch(
      /^fail +config +\S+bad\.json cannot be used \(2 problems\)$/,
    )
    const problems = details(r.stdout, 'config')
    expect(problems).toMatch(/^panel\.button: not a header line/m)
    expect(problems).toMatch(/^mqtt\.url: expected mqtt:\/\//m)
    expect(line(r.stdout, 'audio')).toMatch(/^skip +audio +the configuration is unusable/)
    expect(line(r.stdout, 'broker')).toMatch(/^skip /)
    expect(r.stdout + r.stderr).not.toContain('hunter2-secret')
  })
})
