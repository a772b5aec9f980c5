import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type BrowserContext,
  type CDPSession,
  chromium,
  type Page,
  type Worker,
} from 'playwright-core'
import { CHROMIUM, CHROMIUM_ARGS } from './browser.js'

/**
 * Chromium's push service, on loopback. A real browser subscribes through Google's GCM servers,
 * which a test cannot reach; Chromium takes their addresses from the command line
 * (`--gcm-checkin-url`, `--gcm-registration-url`), so this answers the two calls a subscription
 * makes: the device check-in (a protobuf AndroidCheckinResponse: stats_ok, android_id,
 * security_token) and the registration (`token=…`, from which Chromium makes the subscription's
 * endpoint). The keys (p256dh, auth) are the browser's own. Messages are delivered with CDP
 * `ServiceWorker.deliverPushMessage`, the browser decrypting nothing: the encryption is the
 * device's, checked against RFC 8291 and an independent receiver in test/alerts/.
 */
class GcmStandIn {
  /** The VAPID public key (`sender`) of each registration, in order. */
  readonly senders: string[] = []
  readonly tokens: string[] = []

  private constructor(private readonly server: Server) {}

  static async start(): Promise<GcmStandIn> {
    let self: GcmStandIn | undefined
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        if (req.url?.startsWith('/checkin')) {
          const body = Buffer.alloc(20)
          body[0] = 0x08 // stats_ok = true
          body[1] = 0x01
          body[2] = 0x39 // android_id, fixed64
          body.writeBigUInt64LE(4_242_424_242n, 3)
          body[11] = 0x41 // security_token, fixed64
          body.writeBigUInt64LE(7_777_777_777n, 12)
          res.setHeader('Content-Type', 'application/x-protobuf')
          res.end(body)
          return
        }
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
        const token = `loopback-${(self?.tokens.length ?? 0) + 1}`
        const sender = form.get('sender') ?? ''
        // The browser's own registration (a GCM sender id of digits) is no push subscription.
        if (!/^\d+$/.test(sender)) {
          self?.senders.push(sender)
          self?.tokens.push(token)
        }
        res.setHeader('Content-Type', 'text/plain')
        res.end(`token=${token}`)
      })
    })
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
    self = new GcmStandIn(server)
    return self
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  close(): Promise<void> {
    return new Promise((done) => {
      this.server.close(() => done())
      this.server.closeAllConnections()
    })
  }
}

/** What the worker reports of a notification it shows. */
export interface ShownNotice {
  readonly title: string
  readonly body: string
  readonly tag: string
  readonly actions: string[]
  readonly data: Record<string, unknown> | null
}

/**
 * One phone whose browser can hold push subscriptions: a persistent profile (Chromium refuses
 * push in the off-the-record contexts other tests use), the loopback GCM stand-in, notifications
 * and push allowed for the app's origin, and CDP to deliver pushes to its service workers.
 */
export interface PushPhone {
  readonly context: BrowserContext
  readonly page: Page
  readonly gcm: GcmStandIn
  readonly errors: string[]
  /** Delivers `data` to the push registration of the app (scope under `push/`). */
  deliver(data: string): Promise<void>
  /** The running service worker of the push registration (started by a push if need be). */
  pushWorker(): Promise<Worker>
  /** What the push registration shows now, read in the worker. */
  notices(): Promise<ShownNotice[]>
  close(): Promise<void>
}

export async function launchPushPhone(appUrl: string): Promise<PushPhone> {
  const origin = new URL(appUrl).origin
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-push-chromium-'))
  const gcm = await GcmStandIn.start()
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      ...CHROMIUM_ARGS,
      `--gcm-checkin-url=${gcm.url}/checkin`,
      `--gcm-registration-url=${gcm.url}/register`,
      // Where delivery would come from; closed here: messages arrive through CDP instead.
      '--gcm-mcs-endpoint=https://127.0.0.1:9',
    ],
    env: { ...process.env, TMPDIR: dir, HOME: dir },
    viewport: { width: 360, height: 740 },
    timeout: 30_000,
  })
  await context.grantPermissions(['notifications'], { origin })
  const page = context.pages()[0] ?? (await context.newPage())
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  const cdp: CDPSession = await context.newCDPSession(page)
  const { targetInfo } = await cdp.send('Target.getTargetInfo')
  await cdp.send('Browser.setPermission', {
    origin,
    permission: { name: 'push', userVisibleOnly: true },
    setting: 'granted',
    ...(targetInfo.browserContextId && { browserContextId: targetInfo.browserContextId }),
  })
  const registrations = new Map<string, string>()
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
    for (const r of e.registrations) {
      if (r.isDeleted) registrations.delete(r.scopeURL)
      else registrations.set(r.scopeURL, r.registrationId)
    }
  })
  await cdp.send('ServiceWorker.enable')
  const pushScope = () => [...registrations.keys()].find((s) => s.includes('/push/'))

  const pushWorker = async (): Promise<Worker> => {
    const scope = pushScope()
    if (!scope) throw new Error('the app registered no push worker')
    for (let i = 0; i < 100; i++) {
      for (const w of context.serviceWorkers()) {
        const s = await w.evaluate('self.registration.scope').catch(() => undefined)
        if (s === scope) return w
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`no running service worker for ${scope}`)
  }
  return {
    context,
    page,
    gcm,
    errors,
    async deliver(data) {
      const scope = pushScope()
      const registrationId = scope && registrations.get(scope)
      if (!registrationId) throw new Error('the app registered no push worker')
      await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data })
    },
    pushWorker,
    async notices() {
      const w = await pushWorker()
      // The test tree has no DOM types: the worker's side is written as the text it runs.
      return (await w.evaluate(`self.registration.getNotifications().then((ns) => ns.map((n) => ({
        title: n.title, body: n.body, tag: n.tag,
        actions: (n.actions || []).map((a) => a.action), data: n.data ?? null })))`)) as ShownNotice[]
    },
    async close() {
      await context.close().catch(() => {})
      await gcm.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
