import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { freePort, mosquittoBroker, type TestBroker } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { type WakeSpeaker, wakeSpeaker } from '../helpers/wake-speakers.js'
import { wakeWorld } from './wake-world.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/**
 * Issue 22 item 8 with several speakers (docs/wake-word.md, "The earcon, with several speakers"):
 * on a broker the earcon waits for the claim, so only the speaker that answers beeps — and it still
 * comes, with the LED's listening, before the first byte goes to the Live service.
 */
describe.skipIf(skip)('the earcon with a broker', () => {
  let broker: TestBroker
  let kitchen: WakeSpeaker
  beforeAll(async () => {
    broker = mosquittoBroker(await freePort())
    await broker.start()
    kitchen = await wakeSpeaker(broker.url, 'kitchen')
  })
  afterAll(async () => {
    await kitchen?.close()
    await broker?.stop()
  })

  it('plays after the claim is won and before anything reaches the model', async () => {
    const server = await FakeLiveServer.start({ logger: silentLogger })
    const w = await wakeWorld(server, { confirm: false, arbiter: kitchen.arbiter })
    try {
      await w.sayWake()
      await server.waitForConnection(0, 5000)
      const [claim] = kitchen.log.withEvent('wake_arbitrated')
      expect([claim?.fields.won, claim?.fields.reason]).toEqual([true, 'best'])
      // Nothing had connected, let alone been sent, when the earcon played and the LED lit.
      expect(w.order.slice(0, 2)).toEqual(['earcon@0', 'led:listening@0'])
    } finally {
      await w.close()
      await server.close()
    }
  }, 20_000)
})
