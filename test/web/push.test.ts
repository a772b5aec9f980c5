import { chromium } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { requestDigest, signRequest } from '../../src/protocol/index.js'
import { pushEnvelope } from '../../src/protocol/push-ops.js'
import { freePort, mosquittoBroker, type TestBroker } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { openTab, pairAndConnect, pairLink } from './app-harness.js'
import { CHROMIUM, CHROMIUM_ARGS, missingChromium } from './browser.js'
import { ask, doorRequestBody, recordBroker } from './device-side.js'
import { launchPushPhone, type PushPhone, type ShownNotice } from './push-browser.js'
import { pushWorld } from './push-world.js'
import { buildApp, serveApp } from './serve-app.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()

type World = Awaited<ReturnType<typeof pushWorld>>

/** The worker's side of a tap on notification `id`'s action: dispatched inside the worker. */
async function tap(phone: PushPhone, id: string, action: string): Promise<boolean> {
  const w = await phone.pushWorker()
  return (await w.evaluate(`self.registration.getNotifications().then((ns) => {
    const n = ns.find((x) => x.data && x.data.id === ${JSON.stringify(id)})
    if (n) self.dispatchEvent(new NotificationEvent('notificationclick', { notification: n, action: ${JSON.stringify(action)} }))
    return !!n
  })`)) as boolean
}

async function noticeOf(phone: PushPhone, id: string): Promise<ShownNotice | undefined> {
  return (await phone.notices()).find((n) => n.data?.id === id)
}

/** Waits until the worker shows a notice for `id` that `ok` accepts. */
async function waitNotice(
  phone: PushPhone,
  id: string,
  ok: (n: ShownNotice) => boolean,
  what: string,
): Promise<ShownNotice> {
  const end = Date.now() + 15_000
  for (;;) {
    const n = await noticeOf(phone, id)
    if (n && ok(n)) return n
    if (Date.now() > end)
      throw new Error(`timed out waiting: ${what} (shown: ${JSON.stringify(n)})`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe.skipIf(skip !== undefined)(
  'lock-screen approvals (Web Push) in Chromium',
  {
    timeout: 120_000,
  },
  () => {
    let broker: TestBroker
    let app: Awaited<ReturnType<typeof buildApp>>
    let server: Awaited<ReturnType<typeof serveApp>>
    const open: Array<{ close(): Promise<void> }> = []

    beforeAll(async () => {
      broker = mosquittoBroker(await freePort(), { websocketPort: await freePort() })
      await broker.start()
      app = await buildApp()
      server = await serveApp(app.dir, { brokerWsUrl: broker.wsUrl ?? '', prefix: 'nocturn/v1' })
    }, 60_000)
    afterAll(async () => {
      await server?.close()
      app?.remove()
      await broker?.stop()
    })
    afterEach(async () => {
      for (const o of open.splice(0).reverse()) await o.close()
    })

    /** A device with Web Push, and anna's phone paired, subscribed, then put in a pocket. */
    async function subscribed(
      o: { pocket?: boolean } = {},
    ): Promise<{ w: World; phone: PushPhone }> {
      const w = await pushWorld(broker)
      open.push(w)
      const phone = await launchPushPhone(server.url)
      open.push(phone)
      w.attach(phone)
      await pairAndConnect(phone, pairLink(server.url, w, 'anna', broker.url), 'anna', w.deviceId)
      await until(
        () => w.store.push.pushSubscriptions('anna').length === 1,
        'a subscription',
        20_000,
      )
      // In the pocket: the app is no longer open; only its service worker is left.
      if (o.pocket !== false) await phone.page.goto('about:blank')
      return { w, phone }
    }

    it('the app subscribes with the speaker’s VAPID key and the subscription reaches the device’s store', async () => {
      const { w, phone } = await subscribed()
      const [sub] = w.store.push.pushSubscriptions('anna')
      // The browser made it through its push service (the stand-in) with the device's own key.
      expect(phone.gcm.senders).toEqual([w.vapidKey])
      expect(sub?.endpoint).toMatch(new RegExp(`^https://.+/${phone.gcm.tokens[0]}$`))
      expect(Buffer.from(sub?.p256dh ?? '', 'base64url')).toHaveLength(65)
      expect(Buffer.from(sub?.auth ?? '', 'base64url')).toHaveLength(16)
      // The worker holds the pairing where it can read it (IndexedDB); nothing is pushed yet.
      expect(await phone.notices()).toEqual([])
      expect(phone.errors).toEqual([])
    })

    it('a pushed request shows verified with Approve and Deny; Approve in the worker reaches the device over Mosquitto, the tool runs, and the ending replaces the notice', async () => {
      const { w, phone } = await subscribed()
      const seen = await recordBroker(w)
      await w.speak(async (conn) => {
        conn.toolCall({ id: 'c1', name: 'set_light', args: { room: 'hall' } })
        await until(() => w.asked.length === 1, 'the gate to ask')
        const id = w.asked[0]?.id ?? ''
        const n = await waitNotice(phone, id, () => true, 'the request notice')
        expect(n.title).toBe('Switch on the hall light?')
        expect(n.body).toContain(`${w.deviceId} · asked by voice in the room`)
        expect(n.body).toContain('room: hall')
        expect(n.actions).toEqual(['approve', 'deny'])
        expect(w.lit).toEqual([])
        expect(await tap(phone, id, 'approve')).toBe(true)
        await until(() => w.lit.length === 1, 'the light to be switched on', 15_000)
        // The device's signed ending comes back as a push and replaces the notice: nothing to press.
        const ended = await waitNotice(phone, id, (x) => x.data?.phase === 'ended', 'the ending')
        expect(ended.body).toBe(`${w.deviceId}: You approved this.`)
        expect(ended.actions).toEqual([])
      })
      expect(w.lit).toEqual(['hall'])
      expect(seen.json('/decision')).toEqual([
        expect.objectContaining({ decision: 'approve', grant: 'once', phone: 'anna' }),
      ])
    })

    it('Deny in the worker is a deny: nothing runs', async () => {
      const { w, phone } = await subscribed()
      const q = ask(w, { action: 'switch on the hall light' })
      await waitNotice(phone, q.id, (n) => n.actions.length === 2, 'the request notice')
      expect(await tap(phone, q.id, 'deny')).toBe(true)
      await expect(q.decision).resolves.toMatchObject({ decision: 'deny', by: 'anna' })
      const ended = await waitNotice(phone, q.id, (n) => n.data?.phase === 'ended', 'the ending')
      expect(ended.body).toBe(`${w.deviceId}: You denied this.`)
      expect(w.lit).toEqual([])
    })

    it('a forged, changed, misaddressed or expired push shows nothing; a genuine one after them shows', async () => {
      const { w, phone } = await subscribed()
      const key = w.keys.get('anna') ?? Buffer.alloc(32)
      const signed = <T extends Record<string, unknown>>(b: T, k: Uint8Array = key) => {
        const digest = requestDigest(b)
        return { ...b, digest, macs: { anna: signRequest(k, digest) } }
      }
      const envelope = (m: Record<string, unknown> & { id: string }, over = {}) =>
        pushEnvelope({
          kind: 'request',
          device: w.deviceId,
          id: m.id,
          topic: w.topics.request(m.id),
          message: JSON.stringify(m),
          ...over,
        })
      const forged = signed(
        doorRequestBody(w, 'p-forged', { critical: false }),
        Buffer.alloc(32, 7),
      )
      const changed = {
        ...signed(doorRequestBody(w, 'p-changed', { critical: false })),
        action: 'open every door',
      }
      const expired = signed(
        doorRequestBody(w, 'p-expired', {
          critical: false,
          createdAt: Date.now() - 120_000,
          expiresAt: Date.now() - 60_000,
        }),
      )
      const elsewhere = signed(doorRequestBody(w, 'p-other', { device: 'garage', critical: false }))
      const misfiled = signed(doorRequestBody(w, 'p-misfiled', { critical: false }))
      const pushes = [
        envelope(forged),
        envelope(changed),
        envelope(expired),
        // Signed with anna's key, but for a device this phone is not paired with…
        envelope(elsewhere, { device: 'garage', topic: 'nocturn/v1/garage/approvals/p-other' }),
        // …and a genuine request under another request's topic.
        envelope(misfiled, { id: 'p-else', topic: w.topics.request('p-else') }),
        'not json',
      ]
      for (const p of pushes) await phone.deliver(p)
      const genuine = signed(doorRequestBody(w, 'p-genuine', { critical: false }))
      await phone.deliver(envelope(genuine))
      await waitNotice(phone, 'p-genuine', () => true, 'the genuine notice')
      const shown = await phone.notices()
      expect(shown.map((n) => n.data?.id)).toEqual(['p-genuine'])
      expect(w.unlocked).toEqual([])
    })

    it('a request withdrawn by the speaker replaces its notice with the ending; nothing ran', async () => {
      const { w, phone } = await subscribed()
      const seen = await recordBroker(w)
      const controller = new AbortController()
      const q = ask(w, { signal: controller.signal })
      await waitNotice(phone, q.id, (n) => n.actions.length === 2, 'the request notice')
      controller.abort()
      await expect(q.decision).rejects.toThrow()
      const ended = await waitNotice(phone, q.id, (n) => n.data?.phase === 'ended', 'the ending')
      expect(ended.body).toBe(`${w.deviceId}: Withdrawn: the speaker no longer needs an answer.`)
      expect(ended.actions).toEqual([])
      // A tap on what is left answers nothing.
      await tap(phone, q.id, 'approve')
      await new Promise((r) => setTimeout(r, 500))
      expect(seen.json('/decision')).toEqual([])
      expect(w.lit).toEqual([])
    })

    it('a critical tool’s notice offers no Approve; a tap only opens the app at its card, and nothing is decided', async () => {
      // The app stays open behind the lock screen: a tap brings it to the card. (With no window open
      // the worker opens one; a browser allows that only for a person's own tap, not a test's.)
      const { w, phone } = await subscribed({ pocket: false })
      const seen = await recordBroker(w)
      const q = ask(w, {
        tool: 'unlock_door',
        action: 'unlock the front door',
        args: { door: 'front' },
        critical: true,
      })
      const n = await waitNotice(phone, q.id, () => true, 'the request notice')
      expect(n.title).toBe('Unlock the front door?')
      expect(n.actions).toEqual([])
      expect(n.body).toContain('Asks every time: open the app to answer.')
      // Even an "approve" action given to its click (no such button exists) only opens the app.
      expect(await tap(phone, q.id, 'approve')).toBe(true)
      await phone.page.waitForFunction(
        `document.activeElement && document.activeElement.dataset.card === ${JSON.stringify(q.id)}`,
      )
      expect(await noticeOf(phone, q.id)).toBeUndefined()
      await new Promise((r) => setTimeout(r, 300))
      expect(seen.json('/decision')).toEqual([])
      expect(w.unlocked).toEqual([])
    })

    it('forgetting the speaker takes the subscription back: push_unsubscribe reaches the device, the push registration goes', async () => {
      const { w, phone } = await subscribed({ pocket: false })
      await openTab(phone.page, 'speakers')
      phone.page.once('dialog', (d) => void d.accept())
      await phone.page.getByRole('button', { name: `Forget ${w.deviceId}` }).click()
      await until(
        () => w.store.push.pushSubscriptions('anna').length === 0,
        'the subscription to be removed',
        15_000,
      )
      await phone.page.waitForFunction(
        `navigator.serviceWorker.getRegistrations().then((rs) => !rs.some((r) => r.scope.includes('/push/')))`,
      )
      // A request now reaches this phone by no path.
      const q = ask(w)
      await new Promise((r) => setTimeout(r, 500))
      expect(w.service.delivered.filter((d) => d.includes(q.id))).toEqual([])
    })

    it('on plain HTTP the app says in one sentence what the household misses, and links to the steps', async () => {
      // A LAN name on plain HTTP (kitchen.test, resolved to loopback): not a secure context.
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP kitchen.test 127.0.0.1'],
      })
      open.push(browser)
      const page = await browser.newPage()
      const url = `http://kitchen.test:${new URL(server.url).port}/`
      await page.goto(url)
      await page.waitForSelector('body[data-ready="true"]')
      expect(await page.evaluate('window.isSecureContext')).toBe(false)
      const hint = page.locator('.push-hint')
      expect(await hint.textContent()).toBe(
        'On this plain-HTTP address this phone gets no approvals on its lock screen: a request reaches it only while the app is open. How to set up HTTPS',
      )
      expect(await page.getByRole('button', { name: 'Allow notifications' }).count()).toBe(0)
      await hint.getByRole('link', { name: 'How to set up HTTPS' }).click()
      await page.waitForURL(`${url}https-setup.html`)
      // The steps of docs/phone-app.md, and the household CA certificate to install.
      expect(await page.locator('h1').textContent()).toBe('HTTPS for lock-screen approvals')
      const text = (await page.locator('body').textContent()) ?? ''
      expect(text).toContain('Certificate Trust Settings')
      expect(text).toContain('nocturn tls')
      expect(await page.locator('a[href="household-ca.crt"]').count()).toBe(1)
    })
  },
)
