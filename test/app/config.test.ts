import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pretrained } from '../../src/adapters/openwakeword/model-files.js'
import { checkPcms } from '../../src/app/config/check-pcms.js'
import { ConfigError } from '../../src/app/config/errors.js'
import { EXAMPLE_CONFIG } from '../../src/app/config/example.js'
import { loadConfig, parseConfig } from '../../src/app/config/load.js'
import { listenMode } from '../../src/app/config/schema.js'
import { runProblems } from '../../src/app/config/startup.js'
import { DEFAULT_WAKE_MODEL_DIR, wakeSchema } from '../../src/app/config/wake-schema.js'
import { missingCommands } from '../helpers/system.js'
import { MODEL_DIR } from '../helpers/wake.js'

const SECRET = 'AIzaSy-very-secret-key-0123456789'

function problems(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(text, '/etc/nocturn/config.json', env)
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems]
    throw err
  }
  return []
}

describe('configuration errors: one line each, naming the key and the fix', () => {
  it('a missing file says how to create one', () => {
    expect(() => loadConfig({ path: '/nonexistent/config.json', env: {} })).toThrow(
      /config: \/nonexistent\/config.json does not exist — create it with "nocturn config --example/,
    )
  })

  it('invalid JSON gives the line and column but never quotes the text (it may be a key)', () => {
    const p = problems(`{\n  "provider": { "apiKey": "${SECRET}" }\n  "audio": {}\n}`)
    expect(p).toEqual([
      'config: /etc/nocturn/config.json is not valid JSON at line 3, column 3 — check for a missing comma, quote or brace there',
    ])
  })

  it('an unknown key, with a suggestion when it is a typo', () => {
    expect(problems('{"panel": {"buton": "GPIO17"}, "colour": "red"}')).toEqual([
      'panel.buton: unknown key — did you mean "button"?',
      'colour: unknown key — remove it (see nocturn config --example)',
    ])
  })

  it('a wrong type names what was expected and what was found', () => {
    expect(problems('{"session": {"idleTimeoutSeconds": "20"}, "homeActions": {}}')).toEqual([
      'session.idleTimeoutSeconds: expected a number, got a string',
      'homeActions: expected an array, got an object',
    ])
  })

  it('a pin that does not exist on the header', () => {
    expect(problems('{"panel": {"backend": "gpiod", "button": "GPIO40", "led": "25"}}')).toEqual([
      'panel.button: not a header line: use GPIO0…GPIO27 by name, e.g. "GPIO17" (got "GPIO40")',
      'panel.led: not a header line: use GPIO0…GPIO27 by name, e.g. "GPIO17" (got "25")',
    ])
  })

  it('an enum value that is not one of the choices lists them', () => {
    expect(problems('{"panel": {"backend": "wiringpi"}}')).toEqual([
      'panel.backend: expected one of "gpiod", "rpi-gpio", "terminal", "none" (got "wiringpi")',
    ])
  })

  it('the local wake check: "auto" unless set; another value names the three there are', () => {
    const loaded = (enabled?: unknown) =>
      parseConfig(
        JSON.stringify({ listen: { localCheck: enabled === undefined ? {} : { enabled } } }),
        '/etc/nocturn/config.json',
        { GEMINI_API_KEY: 'k' },
      ).config.listen.localCheck.enabled
    expect([loaded(), loaded(true), loaded(false), loaded('auto')]).toEqual([
      'auto',
      true,
      false,
      'auto',
    ])
    expect(problems('{"listen": {"localCheck": {"enabled": "yes"}}}')).toEqual([
      'listen.localCheck.enabled: expected true, false or "auto", got a string',
    ])
  })

  it('a PCM name that cannot be one', () => {
    expect(problems('{"audio": {"capturePcm": "my mic"}}')[0]).toMatch(
      /^audio.capturePcm: not an ALSA PCM name/,
    )
  })

  it('home actions: wildcard topics, duplicate names, critical with allow', () => {
    const action = (over: object) => ({
      name: 'door',
      description: 'd',
      topic: 'z/door/set',
      payload: 'x',
      ...over,
    })
    const text = JSON.stringify({
      homeActions: [
        action({ topic: 'z/+/set' }),
        action({ critical: true, policy: { voice: 'allow' } }),
      ],
    })
    expect(problems(text)).toEqual([
      'homeActions[0].topic: a topic to publish to cannot contain the wildcards + or # (got "z/+/set")',
      'homeActions[1].name: "door" is used twice; names must be unique (got "door")',
      'homeActions[1].policy: a critical action cannot be "allow": use "ask" or "deny"',
    ])
  })

  it('never puts a secret in a message', () => {
    const all = [
      ...problems(`{"provider": {"apiKey": ["${SECRET}"]}}`),
      ...problems(`{"provider": {"apiKey": ""}}`),
      ...problems(`{"mqtt": {"url": "mqtt://h", "password": "${SECRET}"}}`),
      ...problems(`{"provider": {"apiKey": "${SECRET}", "bogus": 1}`),
    ]
    expect(all.length).toBeGreaterThan(3)
    expect(all.join('\n')).not.toContain('secret')
  })
})

describe('provider.kind picks the provider', () => {
  const loaded = (text: string) => parseConfig(text, '/etc/nocturn/config.json', {}).config
  it('a provider without kind is Gemini, as before there were kinds; so is no provider at all', () => {
    expect(loaded('{"provider": {"model": "gemini-3.8-live"}}').provider.kind).toBe('gemini')
    expect(loaded('{}').provider).toMatchObject({ kind: 'gemini', model: 'gemini-3.8-live' })
    expect(loaded('{"provider": {"kind": "gemini"}}').provider.textModel).toBe('gemini-2.5-flash')
  })

  it('"openai" is OpenAI Realtime, with its own defaults and its own key, never Gemini\'s', () => {
    expect(loaded('{"provider": {"kind": "openai"}}').provider).toMatchObject({
      kind: 'openai',
      model: 'gpt-realtime',
      transcriptionModel: 'gpt-4o-mini-transcribe',
    })
    const env = { OPENAI_API_KEY: 'sk-openai', GEMINI_API_KEY: 'gemini-key' }
    const cfg = (kind: string) =>
      parseConfig(`{"provider": {"kind": "${kind}"}}`, 'c.json', env).config.provider.apiKey
    expect(cfg('openai')).toBe('sk-openai')
    expect(cfg('gemini')).toBe('gemini-key')
  })

  it('an unknown kind names the kinds there are; a typo in a provider key is still suggested', () => {
    expect(problems('{"provider": {"kind": "anthropic"}}')).toEqual([
      'provider.kind: expected one of "gemini", "openai" (got "anthropic")',
    ])
    expect(problems('{"provider": {"modle": "x"}}')).toEqual([
      'provider.modle: unknown key — did you mean "model"?',
    ])
  })
})

describe('provider as a list, in order of preference (failover)', () => {
  const env = { OPENAI_API_KEY: 'sk-openai', GEMINI_API_KEY: 'gemini-key' }
  it('each entry its own kind, models and key; `provider` is the first, `providers` all', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-providers-'))
    writeFileSync(join(dir, 'second-gemini'), 'from-file\n')
    const { config, secretSources } = parseConfig(
      JSON.stringify({
        provider: [
          { kind: 'gemini', model: 'gemini-3.8-live' },
          { kind: 'openai' },
          {
            kind: 'gemini',
            model: 'gemini-3.1-flash-live-preview',
            apiKeyFile: join(dir, 'second-gemini'),
          },
        ],
      }),
      'c.json',
      env,
    )
    expect(config.providers.map((p) => [p.kind, p.model, p.apiKey])).toEqual([
      ['gemini', 'gemini-3.8-live', 'gemini-key'],
      ['openai', 'gpt-realtime', 'sk-openai'],
      // The environment wins over a key file, for every entry of its kind.
      ['gemini', 'gemini-3.1-flash-live-preview', 'gemini-key'],
    ])
    expect(config.provider).toBe(config.providers[0])
    expect(secretSources.apiKey).toBe('environment')
    const noEnv = parseConfig(
      JSON.stringify({ provider: [{ kind: 'openai', apiKeyFile: join(dir, 'second-gemini') }] }),
      'c.json',
      {},
    ).config
    expect(noEnv.providers.map((p) => p.apiKey)).toEqual(['from-file'])
  })

  it('a single object is still one provider, and its problems are named as before', () => {
    expect(
      parseConfig('{"provider": {"kind": "openai"}}', 'c.json', env).config.providers,
    ).toHaveLength(1)
    expect(problems('{"provider": {"modle": "x"}}')).toEqual([
      'provider.modle: unknown key — did you mean "model"?',
    ])
  })

  it('a bad entry is named by its place and says what was wrong', () => {
    expect(problems('{"provider": [{"kind": "openai"}, {"kind": "anthropic"}]}')).toEqual([
      'provider[1].kind: expected one of "gemini", "openai" (got "anthropic")',
    ])
    expect(
      problems('{"provider": [{"kind": "openai"}, {"kind": "gemini", "modle": "x"}]}'),
    ).toEqual(['provider[1].modle: unknown key — did you mean "model"?'])
    expect(problems('{"provider": []}')).toEqual(['provider: must be at least 1 items'])
    expect(
      problems('{"provider": [{"kind": "gemini"}, {"kind": "openai", "apiKeyFile": "/nope/k"}]}'),
    ).toEqual([
      'provider[1].apiKeyFile: cannot read /nope/k (ENOENT) — check the path and that the nocturn user may read it',
    ])
  })

  it("nocturn run names the entry whose key is missing, and where that kind's key goes", () => {
    const loaded = parseConfig('{"provider": [{"kind": "gemini"}, {"kind": "openai"}]}', 'c.json', {
      GEMINI_API_KEY: 'g',
    })
    expect(runProblems(loaded)).toEqual([
      expect.stringMatching(/^provider\[1\]\.apiKey: no OpenAI API key — set OPENAI_API_KEY/),
    ])
  })
})

describe('secrets from the environment and systemd credentials', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-config-'))
  const creds = join(dir, 'creds')
  mkdirSync(creds)
  writeFileSync(join(creds, 'gemini-api-key'), 'from-credential\n')
  writeFileSync(join(creds, 'mqtt-password'), 'pw-credential\n')
  writeFileSync(join(dir, 'key'), 'from-env-file\n')
  const base =
    '{"provider": {"apiKey": "from-config"}, "mqtt": {"url": "mqtt://h", "username": "u"}}'

  it('environment beats its _FILE, which beats credentials, which beat the file', () => {
    const load = (env: NodeJS.ProcessEnv) => parseConfig(base, 'c.json', env)
    const all = {
      GEMINI_API_KEY: 'from-env',
      GEMINI_API_KEY_FILE: join(dir, 'key'),
      CREDENTIALS_DIRECTORY: creds,
    }
    expect(load(all).config.provider.apiKey).toBe('from-env')
    const { GEMINI_API_KEY: _, ...noEnv } = all
    expect(load(noEnv).config.provider.apiKey).toBe('from-env-file')
    expect(load({ CREDENTIALS_DIRECTORY: creds }).config.provider.apiKey).toBe('from-credential')
    expect(load({ CREDENTIALS_DIRECTORY: creds }).config.mqtt?.password).toBe('pw-credential')
    const plain = load({})
    expect(plain.config.provider.apiKey).toBe('from-config')
    expect(plain.secretSources).toEqual({ apiKey: 'config', mqttPassword: 'none' })
  })

  it('run by hand (no $CREDENTIALS_DIRECTORY), a config file finds the credentials folder beside it, as the installer lays them out', () => {
    const etc = mkdtempSync(join(tmpdir(), 'nocturn-etc-'))
    mkdirSync(join(etc, 'credentials'))
    writeFileSync(join(etc, 'credentials', 'gemini-api-key'), 'beside-the-config\n')
    writeFileSync(join(etc, 'credentials', 'mqtt-password'), '')
    const file = join(etc, 'config.json')
    writeFileSync(file, '{"mqtt": {"url": "mqtt://h", "username": "u"}}')
    const byHand = loadConfig({ path: file, env: {} })
    expect(byHand.config.provider.apiKey).toBe('beside-the-config')
    // The installer's empty file means "not used".
    expect(byHand.secretSources).toEqual({ apiKey: 'credential', mqttPassword: 'none' })
    // Inside the unit, systemd's folder is the one read.
    const inUnit = loadConfig({ path: file, env: { CREDENTIALS_DIRECTORY: creds } })
    expect(inUnit.config.provider.apiKey).toBe('from-credential')
    // Text parsed without a file on disk reads nothing beside it.
    expect(parseConfig('{}', file, {}).config.provider.apiKey).toBeUndefined()
  })

  it('an unreadable key file names the key and the path, not a value', () => {
    expect(problems('{"provider": {"apiKeyFile": "/nope/key"}}')).toEqual([
      'provider.apiKeyFile: cannot read /nope/key (ENOENT) — check the path and that the nocturn user may read it',
    ])
  })

  it('without secrets (pair, transcripts): none is read or kept, so an unreadable key file does not stop them', () => {
    const file = join(dir, 'config.json')
    writeFileSync(
      file,
      '{"provider": {"apiKey": "from-config", "apiKeyFile": "/nope/key"}, "mqtt": {"url": "mqtt://h", "username": "u", "passwordFile": "/nope/pw"}}',
    )
    const env = { GEMINI_API_KEY: 'from-env' }
    expect(() => loadConfig({ path: file, env })).toThrow(/mqtt.passwordFile: cannot read/)
    const loaded = loadConfig({ path: file, env, secrets: false })
    expect(
      loadConfig({ path: file, env: { CREDENTIALS_DIRECTORY: creds }, secrets: false }).config.mqtt
        ?.password,
    ).toBeUndefined()
    expect(loaded.config.provider.apiKey).toBeUndefined()
    expect(loaded.config.mqtt).toMatchObject({ url: 'mqtt://h', username: 'u' })
    expect(loaded.config.mqtt?.password).toBeUndefined()
    expect(loaded.secretSources).toEqual({ apiKey: 'none', mqttPassword: 'none' })
  })
})

describe('the example and presets', () => {
  it('the printed example is itself a valid configuration', () => {
    const loaded = parseConfig(EXAMPLE_CONFIG, 'example', {
      GEMINI_API_KEY: 'k',
      NOCTURN_MQTT_PASSWORD: 'p',
    })
    expect(loaded.panel).toMatchObject({ backend: 'gpiod', button: 'GPIO17', led: 'GPIO5' })
    expect(loaded.policies.unlock_front_door).toEqual({ voice: 'ask', text: 'ask' })
    expect(loaded.policies.set_timer).toEqual({ voice: 'allow' })
  })

  it('the example listens for a wake phrase, and says the pretrained model’s licence where it is chosen', () => {
    const { config } = parseConfig(EXAMPLE_CONFIG, 'example', {
      GEMINI_API_KEY: 'k',
      NOCTURN_MQTT_PASSWORD: 'p',
    })
    expect(listenMode(config.listen)).toBe('wake')
    expect(config.listen.mode).toBe('wake')
    // The model the installer puts where the configuration looks for it.
    expect(config.listen.wake?.models).toEqual([{ model: 'hey_jarvis' }])
    expect(pretrained('hey_jarvis')).toBeDefined()
    expect(config.listen.wake?.modelDir).toBe(DEFAULT_WAKE_MODEL_DIR)
    // Its settings are the defaults, written out: the example says what a household gets.
    const defaults = wakeSchema.parse({ models: [{ model: 'hey_jarvis' }] })
    expect(config.listen.wake).toEqual(defaults)
    expect(config.listen.confirm.enabled).toBe(true)
    // The licence is in the comment just above the model's line.
    const lines = EXAMPLE_CONFIG.split('\n')
    const at = lines.findIndex((l) => l.includes('"models": [{ "model": "hey_jarvis" }]'))
    expect(lines.slice(at - 5, at).join('\n')).toMatch(/CC BY-NC-SA 4\.0 — private, non-commercial/)
  })

  it('the AIY preset gives button GPIO23 and LED GPIO25; an empty file is all defaults', () => {
    expect(
      parseConfig('{"panel": {"backend": "gpiod", "preset": "aiy-voice-hat"}}', 'c').panel,
    ).toEqual({
      backend: 'gpiod',
      button: 'GPIO23',
      led: 'GPIO25',
      buttonActiveLow: true,
      ledActiveLow: false,
      debounceMs: 30,
      longPressMs: 800,
    })
    const d = parseConfig('', 'c').config
    expect(d.panel.backend).toBe('none')
    expect(d.store.path).toBe('/var/lib/nocturn/nocturn.db')
  })
})

/** `nocturn config …` as a user runs it. */
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/app/cli.ts', 'config', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  })

describe('nocturn config', () => {
  it('--example prints the example; --check exits 2 with one line per problem', () => {
    const ex = cli(['--example'])
    expect(ex.status).toBe(0)
    expect(ex.stdout).toBe(EXAMPLE_CONFIG)
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-cli-'))
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, '{"panel": {"backend": "gpiod", "button": "GPIO99"}, "extra": 1}')
    const r = cli(['--check', '--config', bad])
    expect(r.status).toBe(2)
    expect(r.stderr.trim().split('\n')).toEqual([
      'panel.button: not a header line: use GPIO0…GPIO27 by name, e.g. "GPIO17" (got "GPIO99")',
      'extra: unknown key — remove it (see nocturn config --example)',
    ])
    const good = join(dir, 'good.json')
    // (wav audio: this machine has no sound card, so the ALSA default PCM would fail the check)
    writeFileSync(
      good,
      '{"panel": {"backend": "none"}, "audio": {"backend": "wav", "inputWav": "/tmp/in.wav"}}',
    )
    const ok = cli(['--check', '--config', good], { GEMINI_API_KEY: SECRET })
    expect(ok.status).toBe(0)
    expect(ok.stdout).toContain('API key: from environment')
    expect(ok.stdout).not.toContain(SECRET)
  })
})

describe('nocturn config --check in wake mode', () => {
  it('names missing wake-word model files with the install line, and shows the phrase when they are there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-cli-wake-'))
    const write = (modelDir: string) => {
      const file = join(dir, 'config.json')
      writeFileSync(
        file,
        JSON.stringify({
          panel: { backend: 'none' },
          audio: { backend: 'wav', inputWav: '/tmp/in.wav' },
          listen: { wake: { models: [{ model: 'hey_jarvis' }], modelDir } },
        }),
      )
      return file
    }
    const empty = mkdtempSync(join(tmpdir(), 'nocturn-no-models-'))
    const missing = cli(['--check', '--config', write(empty)])
    expect(missing.status).toBe(2)
    expect(missing.stderr).toMatch(
      new RegExp(
        `^listen\\.wake: missing model files ${empty}/melspectrogram\\.onnx, .*hey_jarvis.*\\.onnx — sudo nocturn wake install <name> .* --dir ${empty}`,
      ),
    )
    const ok = cli(['--check', '--config', write(MODEL_DIR)])
    expect(ok.status, ok.stderr).toBe(0)
    expect(ok.stdout).toContain('listen: wake (hey_jarvis)')
    expect(ok.stdout).toContain('audio: wav (/tmp/in.wav → no file)')
  })
})

describe('PCMs that do not exist (real arecord/aplay on a hermetic ALSA config)', () => {
  const skip = missingCommands('arecord', 'aplay')

  it.skipIf(skip)('are named by key with the fix; existing ones pass', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-alsa-'))
    const asound = join(dir, 'asound.conf')
    writeFileSync(
      asound,
      [
        `pcm.voice_in { type file; slave.pcm "null"; file "/dev/null"; infile "/dev/zero"; format "raw" }`,
        `pcm.voice_out { type file; slave.pcm "null"; file "${join(dir, 'out.raw')}"; format "raw" }`,
        'pcm.null { type null }',
        '',
      ].join('\n'),
    )
    const env = { ...process.env, ALSA_CONFIG_PATH: asound }
    const good = parseConfig(
      '{"audio": {"capturePcm": "voice_in", "playbackPcm": "voice_out"}}',
      'c',
    ).config
    expect(await checkPcms(good, env)).toEqual([])
    const bad = parseConfig(
      '{"audio": {"capturePcm": "voice_im", "playbackPcm": "plughw:CARD=nosuch,DEV=0"}}',
      'c',
    ).config
    expect((await checkPcms(bad, env)).map((p) => p.line)).toEqual([
      'audio.capturePcm: ALSA has no PCM called "voice_im" — define it in /etc/asound.conf (see hardware/asound.conf.example) or use plughw:CARD=<id>,DEV=0 with an id from "arecord -l"',
      'audio.playbackPcm: ALSA has no PCM called "plughw:CARD=nosuch,DEV=0" — define it in /etc/asound.conf (see hardware/asound.conf.example) or use plughw:CARD=<id>,DEV=0 with an id from "arecord -l"',
    ])
    // nocturn config --check exits 2 on it.
    const file = join(dir, 'config.json')
    writeFileSync(file, '{"audio": {"capturePcm": "voice_im", "playbackPcm": "voice_out"}}')
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'src/app/cli.ts', 'config', '--check', '--config', file],
      {
        encoding: 'utf8',
        env,
      },
    )
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/^audio.capturePcm: ALSA has no PCM called "voice_im"/)
  })
})
