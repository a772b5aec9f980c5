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
import { type NocturnProcess, startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { missingCommands } from '../helpers/system.js'

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
  let nocturn: NocturnProcess | undefined
  let observer: MqttConnection | undefined

  afterAll(async () => {
    await nocturn?.stop()
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
    const config = writeRunConfig(
      work,
      {
        baseUrl: server.baseUrl,
        inputWav: join(work, 'silence.wav'),
        brokerUrl: `mqtt://127.0.0.1:${port}`,
      },
      { panel: { backend: 'none' } },
    )
    nocturn = startNocturnRun(config, { apiKey: 'early-key-not-for-logs' })
    const running = await nocturn.waitForEvent('nocturn_running')
    // Listening, with nothing on the broker's port.
    expect(await listening(port)).toBe(false)
    expect(running.broker).toBe('mqtt')
    // No wake model configured: it listens for speech, and its running line says so.
    expect(running.listen).toBe('speech')
    expect(nocturn.lines.some((e) => e.msg === 'mqtt connected')).toBe(false)

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
    await nocturn.waitFor('status from the device', () => statuses.some((s) => s.online === true))
    // Its log says so too — read from its stdout, which may arrive after the status over MQTT.
    await nocturn.waitForLine('"mqtt connected" in its log', (e) => e.msg === 'mqtt connected')
  }, 90_000)
})
