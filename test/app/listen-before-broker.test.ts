import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { topicsFor } from '../../src/protocol/index.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { freePort, mosquittoBroker, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'

const ROOT = join(import.meta.dirname, '../..')
const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/** Whether anything accepts TCP connections on 127.0.0.1:port right now. */
function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = createConnection({ host: '127.0.0.1', port })
    s.once('connect', () => {
      s.destroy()
      done(true)
    })
    s.once('error', () => done(false))
  })
}

/**
 * Listening does not wait for the broker: `nocturn run` listens with its broker down (approvals
 * fail closed meanwhile), connects once the broker comes, and then publishes its status.
 */
describe.skipIf(skip)('nocturn run before the broker is up', () => {
  let broker: TestBroker | undefined
  let server: FakeLiveServer | undefined
  let child: ChildProcess | undefined
  let observer: MqttConnection | undefined

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const gone = new Promise((r) => child?.once('exit', r))
      child.kill('SIGTERM')
      await gone
    }
    await observer?.close()
    await server?.close()
    await broker?.stop()
  })

  it('listens at once, connects when the broker comes, and publishes its status', async () => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-early-'))
    const port = await freePort()
    server = await FakeLiveServer.start({ logger: silentLogger, scripts: () => ({ steps: [] }) })
    const silence = Buffer.alloc(32_000)
    writeFileSync(
      join(work, 'silence.wav'),
      Buffer.concat([wavHeader(16_000, silence.length), silence]),
    )
    const config = join(work, 'config.json')
    writeFileSync(
      config,
      JSON.stringify({
        provider: {
          model: 'gemini-2.5-flash-native-audio-preview-12-2025',
          textModel: 'gemini-3.5-flash',
          baseUrl: server.baseUrl,
        },
        audio: {
          backend: 'wav',
          inputWav: join(work, 'silence.wav'),
          outputWav: join(work, 'speaker.wav'),
        },
        panel: { backend: 'none' },
        mqtt: {
          url: `mqtt://127.0.0.1:${port}`,
          deviceId: 'kitchen',
          username: USERS.device.username,
        },
        phonesDir: join(work, 'phones'),
        store: { path: join(work, 'nocturn.db') },
      }),
    )
    let logs = ''
    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/app/cli.ts', 'run', '--config', config],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          GEMINI_API_KEY: 'early-key-not-for-logs',
          NOCTURN_MQTT_PASSWORD: USERS.device.password,
          NOCTURN_LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    child.stdout?.on('data', (c: Buffer) => {
      logs += c.toString()
    })
    child.stderr?.on('data', (c: Buffer) => {
      logs += c.toString()
    })
    const events = () =>
      logs
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { event?: string; msg?: string; broker?: string })
    const waitFor = async (what: string, ok: () => boolean) => {
      const deadline = Date.now() + 45_000
      while (!ok()) {
        if (child?.exitCode !== null) throw new Error(`nocturn run exited early:\n${logs}`)
        if (Date.now() > deadline) throw new Error(`no ${what} within 45 s:\n${logs}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }

    await waitFor('listening', () => events().some((e) => e.event === 'nocturn_running'))
    // Listening, with nothing on the broker's port.
    expect(await listening(port)).toBe(false)
    expect(events().find((e) => e.event === 'nocturn_running')?.broker).toBe('mqtt')
    expect(events().some((e) => e.msg === 'mqtt connected')).toBe(false)

    broker = mosquittoBroker(port)
    await broker.start()
    observer = new MqttConnection({
      url: broker.url,
      clientId: 'observer',
      username: USERS.phone.username,
      password: USERS.phone.password,
      logger: silentLogger,
      clock: realClock(),
    })
    const statuses: { state?: string; online?: boolean }[] = []
    const statusTopic = topicsFor(PREFIX, 'kitchen').status
    observer.onMessage((topic, payload) => {
      if (topic === statusTopic) statuses.push(JSON.parse(payload.toString()))
    })
    observer.start()
    await observer.ready()
    await observer.subscribe([statusTopic])
    await waitFor('status from the device', () => statuses.some((s) => s.online === true))
    expect(events().some((e) => e.msg === 'mqtt connected')).toBe(true)
  }, 90_000)
})
