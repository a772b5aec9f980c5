import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EmbeddedBroker } from '../../src/adapters/aedes/broker.js'
import { silentLogger } from '../../src/core/logger.js'
import { pairingUri } from '../../src/protocol/index.js'
import { freePort, PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { phoneWorld } from '../phone/world.js'
import { openTab, pairAndConnect, pairLink, shownText } from './app-harness.js'
import { missingChromium } from './browser.js'
import { ask } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()

/** The offline run's broker: the embedded one with no users, open to anyone on loopback. */
async function openBroker(): Promise<TestBroker & { wsUrl: string }> {
  const port = await freePort()
  const wsPort = await freePort()
  const b = new EmbeddedBroker({ port, wsPort, prefix: PREFIX, logger: silentLogger })
  return {
    name: 'aedes-open',
    url: `mqtt://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${wsPort}`,
    start: () => b.start(),
    kill: () => b.stop(),
    stop: () => b.stop(),
  }
}

/** Issue 44, items 1 and 2: the first minutes with the app, as a household meets them. */
describe.skipIf(skip !== undefined)('first contact with the phone app', { timeout: 90_000 }, () => {
  const suite = webSuite()
  let open: Awaited<ReturnType<typeof openBroker>>
  beforeAll(async () => {
    open = await openBroker()
    await open.start()
  })
  afterAll(async () => {
    await open?.stop()
  })

  it('a pairing link lands on the request waiting for this phone, with no password asked, on a broker that takes any phone', async () => {
    const w = await phoneWorld(open)
    try {
      const q = ask(w, { action: 'unlock the front door', tool: 'unlock_door', critical: true })
      const uri = pairingUri({
        broker: open.url,
        device: w.deviceId,
        prefix: PREFIX,
        phone: 'anna',
        key: w.keys.get('anna') ?? Buffer.alloc(32),
      })
      const anna = await suite.blank()
      await anna.page.goto(`${suite.appUrl}#pair=${encodeURIComponent(`${uri}&ws=${open.wsUrl}`)}`)
      await suite.card(anna, q.id).waitFor()
      expect(await anna.page.locator('nav [aria-current="page"]').getAttribute('data-tab')).toBe(
        'approvals',
      )
      await anna.page.locator('[data-health="connected"]').waitFor()
      const seen = await shownText(anna.page.locator('body'))
      expect(seen).toContain('Unlock the front door')
      expect(seen).not.toMatch(/password/i)
      // Nowhere else either: Speakers keeps the password box closed.
      await openTab(anna.page, 'speakers')
      expect(await shownText(anna.page.locator('body'))).not.toMatch(/enter .*password/i)
    } finally {
      await w.close()
    }
  })

  it('a broker that wants a password: asked for once it refused, an empty Connect says what to do, the wrong one says what the broker said', async () => {
    const w = await suite.world()
    const q = ask(w, { action: 'switch on the hall light' })
    const ben = await suite.blank()
    await ben.page.goto(suite.link(w, 'ben'))
    const asks = ben.page.locator('[data-health="needs-login"]')
    await asks.waitFor()
    expect(await asks.textContent()).toContain("the broker asks for this phone's password")
    // Not heard yet, so nothing is claimed about what it remembers.
    await openTab(ben.page, 'grants')
    expect(await shownText(ben.page.locator('#view'))).toContain(`Not connected to ${w.deviceId}`)
    expect(await shownText(ben.page.locator('#view'))).not.toContain('Nothing remembered')
    await openTab(ben.page, 'speakers')
    const speaker = ben.page.locator(`[data-speaker="${w.deviceId}"]`)
    await speaker.getByRole('button', { name: 'Connect' }).click()
    await ben.page.locator('#notice [role="alert"]', { hasText: 'password first' }).waitFor()
    await speaker.getByLabel(/Password for this phone on/).fill('not-the-password')
    await speaker.getByRole('button', { name: 'Connect' }).click()
    await ben.page.locator('[data-health="refused"]').waitFor()
    expect(await speaker.locator('[role="alert"]').textContent()).toMatch(/\(it said: [a-z ]+\)/)
    // Its own problem replaced the first one: no stale "asks for" line is left beside it.
    expect(await shownText(ben.page.locator('body'))).not.toContain('asks for this phone')
    await speaker.getByLabel(/Password for this phone on/).fill(USERS.ben.password)
    await speaker.getByRole('button', { name: 'Connect' }).click()
    await ben.page.locator('[data-health="connected"]').waitFor()
    await openTab(ben.page, 'approvals')
    await suite.card(ben, q.id).waitFor()
    expect(await shownText(ben.page.locator('body'))).not.toMatch(/password/i)
  })

  it('on an IP address the fingerprint is not offered: it says why and which address to open', async () => {
    // The app at 127.0.0.1 and the speaker expecting it there: no address of the phone can work.
    const at = new URL(suite.appUrl)
    const byNumber = await phoneWorld(suite.broker, {
      party: { origin: at.origin, rpId: at.hostname },
    })
    // The speaker expecting it at localhost, the app opened at 127.0.0.1: open it by the name.
    const named = at.origin.replace('127.0.0.1', 'localhost')
    const byName = await phoneWorld(suite.broker, { party: { origin: named, rpId: 'localhost' } })
    try {
      for (const [w, says] of [
        [byNumber, /by its name, never by a number address such as 127\.0\.0\.1 — and/],
        [byName, new RegExp(`Open the app at ${named.replace(/\./g, '\\.')} instead`)],
      ] as const) {
        const anna = await suite.blank()
        await pairAndConnect(
          anna,
          pairLink(suite.appUrl, w, 'anna', suite.broker.url),
          'anna',
          w.deviceId,
        )
        const card = anna.page.locator(`[data-speaker="${w.deviceId}"]`)
        const owner = card.locator('[data-owner]')
        await owner.waitFor()
        expect(await owner.getAttribute('data-owner')).toBe('unavailable')
        expect(await shownText(owner)).toMatch(says)
        expect(await card.locator('[data-owner-register]').count()).toBe(0)
      }
    } finally {
      await byNumber.close()
      await byName.close()
    }
  })
})
