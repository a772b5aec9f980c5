import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { freePort, mosquittoBroker, type TestBroker, USERS } from '../helpers/brokers.js'
import { fakeGpiod } from '../helpers/fake-gpiod.js'
import { type NocturnProcess, startNocturnRun } from '../helpers/nocturn-process.js'
import { missingCommands } from '../helpers/system.js'

const ROOT = join(import.meta.dirname, '../..')
const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/** What `nocturn run` must not load until it is needed (docs/gemini.md, bench/startup.bench.ts). */
const NOT_AT_START: readonly [string, RegExp][] = [
  ['the Gemini SDK', /\/node_modules\/@google\/genai\//],
  ['google-auth-library', /\/node_modules\/google-auth-library\//],
  ['the embedded broker (aedes)', /\/node_modules\/aedes\/|\/src\/adapters\/aedes\//],
  ['the doctor', /\/src\/app\/doctor\/|\/src\/app\/commands\/doctor\./],
  ['the phone client', /\/src\/phone\//],
  ['the fake Live server', /\/src\/testing\//],
  ['the pairing QR code', /\/node_modules\/uqr\/|\/src\/app\/commands\/pair\./],
  // No wake model configured: neither runtime (the WASM one alone costs 1–2 s and ~70 MB).
  [
    'the wake-word runtimes',
    /\/node_modules\/onnxruntime-|\/src\/adapters\/openwakeword\/(runtime|features|detector|load-detector)\./,
  ],
  // Only wake mode on the native runtime gives code pages back, once its load has settled.
  ['koffi and the libc adapter', /\/node_modules\/koffi\/|\/src\/adapters\/libc\//],
  // The Live transport comes with the SDK; mqtt.js with the broker connection, after listening.
  ['ws', /\/node_modules\/ws\//],
  ['mqtt.js', /\/node_modules\/mqtt\//],
  // The owner's yes: at the first registration or critical approve.
  [
    'the WebAuthn verifier',
    /\/node_modules\/@simplewebauthn\/|\/src\/adapters\/webauthn\/owner-check\./,
  ],
]
const MQTT_JS = /\/node_modules\/mqtt\//

/** What one `nocturn run` loaded: everything, and what before it logged `nocturn running`. */
interface Run {
  readonly loaded: string[]
  readonly atStart: string[]
  /** When each was loaded (Date.now, the clock of the log lines' `time`). */
  readonly loads: readonly { readonly at: number; readonly url: string }[]
  /** Its log, for the lines' times. */
  readonly output: string
}

/** pino's `time` (epoch ms) of the first log line with `msg`. */
function logTime(logs: string, msg: string): number {
  for (const line of logs.split('\n')) {
    if (!line.startsWith('{')) continue
    const entry = JSON.parse(line) as { msg?: string; time?: number }
    if (entry.msg === msg && typeof entry.time === 'number') return entry.time
  }
  throw new Error(`no "${msg}" line with a time:\n${logs}`)
}

/** 16 kHz mono 16-bit PCM as a WAV file. */
function wav(pcm: Buffer): Buffer {
  return Buffer.concat([wavHeader(16_000, pcm.length), pcm])
}

/**
 * `nocturn run` as a household runs it (a config file, the real Mosquitto, the phone app served),
 * with a loader hook recording every module it loads: nothing a run does not use is loaded before
 * it listens, and the SDK arrives with the first Live connection — from its web entry, without the
 * auth library.
 */
describe.skipIf(skip)('nocturn run loads what it needs when it needs it', () => {
  let broker: TestBroker
  let server: FakeLiveServer
  let work: string
  const children: NocturnProcess[] = []

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'nocturn-lazy-'))
    broker = mosquittoBroker(await freePort())
    await broker.start()
    server = await FakeLiveServer.start({ logger: silentLogger, scripts: () => ({ steps: [] }) })
    writeFileSync(join(work, 'silence.wav'), wav(Buffer.alloc(32_000)))
  })
  afterAll(async () => {
    for (const c of children) await c.stop('SIGKILL')
    await server?.close()
    await broker?.stop()
  })

  /**
   * Starts `nocturn run` on `inputWav` and resolves once a log line has `msg`; returns what loaded.
   * `entry`: the sources through tsx (default), or the bundle the systemd unit runs.
   */
  async function runUntil(
    name: string,
    inputWav: string,
    msg: string,
    entry: string[] = ['--import', 'tsx', 'src/app/cli.ts'],
    panel: { config: object; env: NodeJS.ProcessEnv } = { config: { backend: 'none' }, env: {} },
  ): Promise<Run> {
    const config = join(work, `${name}.json`)
    const loadLog = join(work, `${name}.loaded`)
    writeFileSync(loadLog, '')
    writeFileSync(
      config,
      JSON.stringify({
        provider: {
          model: 'gemini-2.5-flash-native-audio-preview-12-2025',
          textModel: 'gemini-3.5-flash',
          baseUrl: server.baseUrl,
        },
        audio: { backend: 'wav', inputWav, outputWav: join(work, `${name}.speaker.wav`) },
        panel: panel.config,
        mqtt: { url: broker.url, deviceId: 'kitchen', username: USERS.device.username },
        phoneApp: { enabled: true, port: 0 },
        phonesDir: join(work, 'phones'),
        store: { path: join(work, `${name}.db`) },
      }),
    )
    const nocturn = startNocturnRun(config, {
      apiKey: 'lazy-key-not-for-logs',
      nodeArgs: ['--import', join(ROOT, 'test/helpers/load-recorder.mjs')],
      entry,
      env: { ...panel.env, NOCTURN_LOAD_LOG: loadLog },
    })
    children.push(nocturn)
    await nocturn.waitForLine(`"msg":"${msg}"`, (l) => l.msg === msg)
    const loads = readFileSync(loadLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const space = l.indexOf(' ')
        return { at: Number(l.slice(0, space)), url: l.slice(space + 1) }
      })
    await nocturn.stop()
    const runningAt = logTime(nocturn.output, 'nocturn running')
    return {
      loads,
      output: nocturn.output,
      loaded: loads.map((l) => l.url),
      // Strictly earlier, on the same wall clock in ms: a load in the very millisecond of the line
      // counts as after it (the connection starts right after the line is written).
      atStart: loads.filter((l) => l.at < runningAt).map((l) => l.url),
    }
  }

  it('listening: none of the SDK, ws, mqtt.js, the auth library, the broker, the doctor, the phone client, the fake server or the QR code; mqtt.js right after', async () => {
    const { loaded, atStart } = await runUntil('idle', join(work, 'silence.wav'), 'mqtt connected')
    // The hook saw the run itself, so an empty list cannot pass for a lazy one.
    expect(atStart.some((u) => u.endsWith('/src/app/appliance.ts'))).toBe(true)
    expect(atStart.some((u) => u.includes('/src/adapters/gemini/gemini-live.ts'))).toBe(true)
    const early = NOT_AT_START.filter(([, re]) => atStart.some((u) => re.test(u))).map(([n]) => n)
    expect(early).toEqual([])
    // …and the broker connection, once the device listens, brings mqtt.js.
    expect(loaded.some((u) => MQTT_JS.test(u))).toBe(true)
  })

  it('the bundle the systemd unit runs (dist/service) loads none of them before listening either', async () => {
    // dist/ is built once for the run when missing (test/helpers/build-once.ts).
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist/service/meta.json'), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>
    }
    const run = await runUntil('bundled', join(work, 'silence.wav'), 'mqtt connected', [
      join(ROOT, 'dist/service/cli.js'),
    ])
    // Each bundle file loaded stands for the compiled modules in it (dist/x.js, i.e. src/x.ts).
    const modules = run.atStart.flatMap((u) => {
      const out = /\/(dist\/service\/[^/]+\.js)$/.exec(u)?.[1]
      if (!out) return [u]
      return Object.keys(meta.outputs[out]?.inputs ?? {}).map(
        (i) => `/${i.replace(/^dist\//, 'src/')}`,
      )
    })
    expect(modules.some((u) => u.endsWith('/src/app/appliance.js'))).toBe(true)
    expect(modules.some((u) => u.includes('/src/adapters/gemini/gemini-live.js'))).toBe(true)
    const early = NOT_AT_START.filter(([, re]) => modules.some((u) => re.test(u))).map(([n]) => n)
    expect(early).toEqual([])
    expect(run.loaded.some((u) => MQTT_JS.test(u))).toBe(true)
  })

  it('the bundle compiles the rest of the start only once the panel answers (the button first)', async () => {
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist/service/meta.json'), 'utf8')) as {
      outputs: Record<string, { entryPoint?: string; inputs: Record<string, unknown> }>
    }
    const rest = Object.entries(meta.outputs).find(
      ([, o]) => o.entryPoint === 'dist/app/compose/after-panel.js',
    )
    // The broker, the voice driver and the listening loop are composed from that chunk.
    const inRest = Object.keys(rest?.[1].inputs ?? {})
    for (const m of ['broker', 'voice', 'listening'])
      expect(inRest).toContain(`dist/app/compose/${m}.js`)
    const gpiod = fakeGpiod(2)
    try {
      const run = await runUntil(
        'panel-first',
        join(work, 'silence.wav'),
        'nocturn running',
        [join(ROOT, 'dist/service/cli.js')],
        { config: { backend: 'gpiod', button: 'GPIO17' }, env: gpiod.env },
      )
      const loadedAt = run.loads.find((l) => l.url.endsWith(`/${rest?.[0]}`))?.at
      expect(loadedAt).toBeGreaterThanOrEqual(logTime(run.output, 'panel started'))
    } finally {
      gpiod.cleanup()
    }
  })

  it('the first Live connection loads the SDK from its web entry, still without the auth library', async () => {
    const { loaded } = await runUntil(
      'spoken',
      join(ROOT, 'fixtures/offline/unlock-request.wav'),
      'live connected',
    )
    expect(loaded.some((u) => /\/node_modules\/@google\/genai\/dist\/web\//.test(u))).toBe(true)
    expect(loaded.filter((u) => /\/node_modules\/@google\/genai\/dist\/node\//.test(u))).toEqual([])
    expect(loaded.filter((u) => /\/node_modules\/google-auth-library\//.test(u))).toEqual([])
  })
})
