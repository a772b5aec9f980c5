import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { EmbeddedBroker } from '../../src/adapters/aedes/broker.js'
import { startAppliance } from '../../src/app/appliance.js'
import type { Appliance } from '../../src/app/compose/appliance-contract.js'
import { parseConfig } from '../../src/app/config/load.js'
import { HOUSEHOLD_ACTIONS } from '../../src/app/household-scene.js'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { silentLogger } from '../../src/core/logger.js'
import { PhoneClient, type PhoneEvent } from '../../src/phone/client.js'
import { DEFAULT_PREFIX } from '../../src/protocol/index.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { testPhoneLink } from '../helpers/device-mqtt.js'
import { until } from '../helpers/wait.js'

it('stopping the appliance mid-session ends the session now: the pending approval is withdrawn from the phone and the chat is complete', async () => {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-close-'))
  const broker = new EmbeddedBroker({ port: 0, prefix: DEFAULT_PREFIX, logger: silentLogger })
  await broker.start()
  const server = await FakeLiveServer.start({
    logger: silentLogger,
    scripts: [
      {
        steps: [
          { waitFor: 'realtimeInput', timeoutMs: 20_000 },
          { send: { serverContent: { inputTranscription: { text: 'Unlock the front door.' } } } },
          { send: { toolCall: { functionCalls: [{ id: 'c1', name: 'unlock_front_door' }] } } },
        ],
      },
    ],
  })
  const anna = new PhoneKeyStore(join(work, 'phones')).add('anna', "Anna's phone")
  const seen: PhoneEvent[] = []
  const phone = new PhoneClient({
    link: testPhoneLink,
    pairing: {
      broker: broker.url,
      device: 'kitchen',
      prefix: DEFAULT_PREFIX,
      phone: 'anna',
      key: anna.key,
    },
    logger: silentLogger,
  })
  phone.on((e) => seen.push(e)) // Anna never answers
  await phone.start()
  let appliance: Appliance | undefined
  try {
    appliance = await startAppliance({
      loaded: parseConfig(
        JSON.stringify({
          provider: {
            model: 'gemini-2.5-flash-native-audio-preview-12-2025',
            baseUrl: server.baseUrl,
          },
          audio: {
            backend: 'wav',
            inputWav: join(import.meta.dirname, '../../fixtures/offline/unlock-request.wav'),
            outputWav: join(work, 'speaker.wav'),
          },
          mqtt: { url: broker.url, deviceId: 'kitchen' },
          phonesDir: join(work, 'phones'),
          store: { path: join(work, 'nocturn.db') },
          // Not served: port 8080 may be held by another test or the machine.
          phoneApp: { enabled: false },
          // Long enough that only close() can end this session during the test.
          session: { idleTimeoutSeconds: 3600, budgetMinutes: 60, approvalTimeoutSeconds: 3600 },
          homeActions: HOUSEHOLD_ACTIONS,
        }),
        'test config',
        { GEMINI_API_KEY: 'test-key' },
      ),
      logger: silentLogger,
    })
    await until(() => seen.some((e) => e.kind === 'pending'), 'the approval on the phone')
    const conversationId = appliance.store.listConversations()[0]?.id as string
    await appliance.close()
    appliance = undefined
    await until(() => seen.some((e) => e.kind === 'outcome'), 'the outcome on the phone')
    expect(seen.flatMap((e) => (e.kind === 'outcome' ? [e.outcome.state] : []))).toEqual([
      'withdrawn',
    ])
    // Nothing was unlocked, and the spoken request and the withdrawn call are in the chat.
    expect(
      server
        .framesOf('toolResponse')
        .some((f) => JSON.stringify(f).includes('"willContinue":false')),
    ).toBe(false)
    const { SqliteStore } = await import('../../src/adapters/sqlite/sqlite-store.js')
    const store = new SqliteStore(join(work, 'nocturn.db'))
    const chat = store
      .messages(conversationId)
      .map((m) =>
        m.role === 'tool' ? `${m.toolName}: ${m.outcome.ok ? 'ok' : m.outcome.code}` : m.text,
      )
    expect(chat).toEqual(['Unlock the front door.', '', 'unlock_front_door: NOC_ERR_CANCELLED'])
    store.close()
  } finally {
    await appliance?.close()
    await phone.close()
    await server.close()
    await broker.stop()
  }
}, 60_000)
