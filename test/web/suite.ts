import type { Browser } from 'playwright-core'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { freePort, mosquittoBroker, type TestBroker } from '../helpers/brokers.js'
import { type PhoneWorld, phoneWorld } from '../phone/world.js'
import {
  newPhone,
  openTab,
  type PhoneName,
  type PhonePage,
  pairAndConnect,
  pairLink,
} from './app-harness.js'
import { launchChromium } from './browser.js'
import { buildApp, serveApp } from './serve-app.js'

/**
 * What every Chromium suite shares: a Mosquitto with its WebSocket listener and per-phone ACL, the
 * app built and served as the device serves it, one browser; devices and phones made per test and
 * closed after it (a phone that threw a page error fails its test). Call inside `describe`.
 */
export function webSuite() {
  let broker: TestBroker
  let server: Awaited<ReturnType<typeof serveApp>>
  let app: Awaited<ReturnType<typeof buildApp>>
  let chromium: Awaited<ReturnType<typeof launchChromium>>
  const worlds: PhoneWorld[] = []
  const phones: PhonePage[] = []

  beforeAll(async () => {
    broker = mosquittoBroker(await freePort(), {
      websocketPort: await freePort(),
      logPackets: true,
    })
    await broker.start()
    app = await buildApp()
    server = await serveApp(app.dir, { brokerWsUrl: broker.wsUrl ?? '', prefix: 'nocturn/v1' })
    chromium = await launchChromium()
  }, 60_000)
  afterAll(async () => {
    await chromium?.close()
    await server?.close()
    app?.remove()
    await broker?.stop()
  })
  afterEach(async () => {
    for (const p of phones.splice(0)) {
      expect(p.errors).toEqual([])
      await p.context.close()
    }
    for (const w of worlds.splice(0)) await w.close()
  })

  return {
    get broker(): TestBroker {
      return broker
    },
    get appUrl(): string {
      return server.url
    },
    get browser(): Browser {
      return chromium.browser
    },
    async world(): Promise<PhoneWorld> {
      const w = await phoneWorld(broker)
      worlds.push(w)
      return w
    },
    /** A fresh phone (its own storage), closed after the test. */
    async blank(options?: { colorScheme?: 'light' | 'dark' }): Promise<PhonePage> {
      const p = await newPhone(chromium.browser, options)
      phones.push(p)
      return p
    },
    /** A phone paired with `w` as `name`, connected, on Approvals. */
    async phone(name: PhoneName, w: PhoneWorld, into?: PhonePage): Promise<PhonePage> {
      const p = into ?? (await this.blank())
      await pairAndConnect(p, pairLink(server.url, w, name, broker.url), name, w.deviceId)
      await openTab(p.page, 'approvals')
      return p
    },
    link(w: PhoneWorld, name: PhoneName): string {
      return pairLink(server.url, w, name, broker.url)
    },
    card(p: PhonePage, id: string) {
      return p.page.locator(`[data-card="${id}"]`)
    },
  }
}
