import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import { FakeHomeAssistant } from '../../src/testing/fake-home-assistant/server.js'
import type { ReceivedFrame } from '../../src/testing/fake-live-server/index.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { freePort, mosquittoBroker, type TestBroker } from '../helpers/brokers.js'
import { type NocturnProcess, startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { missingCommands } from '../helpers/system.js'

const ROOT = join(import.meta.dirname, '../..')
const TOKEN = 'ha-long-lived-token-never-logged'
const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/**
 * `nocturn run` as a household starts it, with `homeAssistant` in its config and the token only in
 * its environment: the stand-in HA's tools reach the model's setup, a spoken call switches a light,
 * and the token appears nowhere in what the process wrote.
 */
describe.skipIf(skip)('nocturn run with Home Assistant configured', () => {
  let broker: TestBroker
  let server: FakeLiveServer
  let ha: FakeHomeAssistant
  let nocturn: NocturnProcess | undefined

  beforeAll(async () => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-home-'))
    broker = mosquittoBroker(await freePort())
    await broker.start()
    ha = await FakeHomeAssistant.start({ token: TOKEN })
    const final = (f: ReceivedFrame) =>
      f.key === 'toolResponse' && !JSON.stringify(f.frame).includes('"willContinue":true')
    server = await FakeLiveServer.start({
      logger: silentLogger,
      scripts: [
        {
          steps: [
            { waitFor: 'realtimeInput', timeoutMs: 60_000 },
            {
              send: {
                serverContent: { inputTranscription: { text: 'Turn on the kitchen light.' } },
              },
            },
            {
              send: {
                toolCall: {
                  functionCalls: [
                    { id: 'c1', name: 'intent__HassTurnOn', args: { name: 'Kitchen Light' } },
                  ],
                },
              },
            },
            { waitFor: final, timeoutMs: 60_000 },
            { send: { serverContent: { turnComplete: true } } },
          ],
        },
      ],
    })
    const config = writeRunConfig(
      work,
      {
        baseUrl: server.baseUrl,
        inputWav: join(ROOT, 'fixtures/offline/unlock-request.wav'),
        brokerUrl: broker.url,
      },
      {
        session: { idleTimeoutSeconds: 3 },
        homeAssistant: { url: ha.url, area: 'Kitchen' },
      },
    )
    nocturn = startNocturnRun(config, { apiKey: 'e2e-key', env: { NOCTURN_HA_TOKEN: TOKEN } })
    await nocturn.waitForEvent('session_closed', 90_000)
    await nocturn.stop()
  }, 120_000)

  afterAll(async () => {
    await nocturn?.stop('SIGKILL')
    await server?.close()
    await ha?.stop()
    await broker?.stop()
  })

  it('offers HA’s tools in the session and switches the light by voice', () => {
    const setup = server.connections[0]?.setup as {
      tools: { functionDeclarations: { name: string }[] }[]
    }
    const names = setup.tools.flatMap((t) => t.functionDeclarations.map((d) => d.name))
    expect(names).toEqual(
      expect.arrayContaining(['current_time', 'intent__HassTurnOn', 'intent__HassTurnOff']),
    )
    expect(ha.house.calls.map((c) => `${c.via} ${c.domain}.${c.service} ${c.entityIds}`)).toEqual([
      'websocket homeassistant.turn_on light.kitchen',
    ])
  })

  it('the token is in no log line and no argument', () => {
    expect(nocturn?.output).not.toContain(TOKEN)
    expect(nocturn?.output).toContain('home tools listed')
  })
})
