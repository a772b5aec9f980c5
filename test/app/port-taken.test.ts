import { mkdtempSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startAppliance } from '../../src/app/appliance.js'
import type { Appliance } from '../../src/app/compose/appliance-contract.js'
import { parseConfig } from '../../src/app/config/load.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { freePort, mosquittoBroker, type TestBroker, USERS } from '../helpers/brokers.js'
import { watchStatus } from '../helpers/device-mqtt.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

const ROOT = join(import.meta.dirname, '../..')
const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/**
 * Issue 26, item 4: with the phone app's port taken, the app used to be silently not served (one
 * log line). The retained status and the LED must say it, with the fix and what holds the port.
 */
describe.skipIf(skip)('the phone app port taken by another program', () => {
  let broker: TestBroker | undefined
  let server: FakeLiveServer | undefined
  let appliance: Appliance | undefined
  let watcher: { close(): Promise<void> } | undefined
  let holder: Server | undefined
  afterAll(async () => {
    await appliance?.close()
    await watcher?.close()
    await server?.close()
    await broker?.stop()
    await new Promise((r) => holder?.close(r))
  })

  it('shows on the LED and in the status, with the config key to change and who holds it', async () => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-port-'))
    const port = await freePort()
    holder = createServer()
    await new Promise<void>((r) => holder?.listen(port, '127.0.0.1', r))
    broker = mosquittoBroker(await freePort())
    await broker.start()
    server = await FakeLiveServer.start({ scripts: [], logger: silentLogger })
    const watching = await watchStatus<{ state: string; reason?: string }>(broker.url)
    watcher = watching
    const statuses = watching.statuses
    appliance = await startAppliance({
      loaded: parseConfig(
        JSON.stringify({
          provider: { baseUrl: server.baseUrl },
          audio: {
            backend: 'wav',
            inputWav: join(ROOT, 'fixtures/offline/unlock-request.wav'),
            outputWav: join(work, 'speaker.wav'),
          },
          mqtt: { url: broker.url, deviceId: 'kitchen', username: USERS.device.username },
          phoneApp: { port, host: '127.0.0.1' },
          phonesDir: join(work, 'phones'),
          store: { path: join(work, 'nocturn.db') },
        }),
        'test config',
        { GEMINI_API_KEY: 'test-key', NOCTURN_MQTT_PASSWORD: USERS.device.password },
      ),
      logger: silentLogger,
      wavPaced: false,
    })
    expect(appliance.phoneApp).toBeUndefined()
    expect(appliance.panel.led).toBe('error')
    await until(
      () => statuses.some((s) => s.state === 'error'),
      "statuses.some((s) => s.state === 'error')",
      60_000,
    )
    const status = statuses.find((s) => s.state === 'error')
    expect(status?.reason).toMatch(
      new RegExp(
        `^the phone app is not served: port ${port} is taken by .* \\(pid ${process.pid}\\) — set phoneApp\\.port to a free port`,
      ),
    )
  }, 60_000)
})
