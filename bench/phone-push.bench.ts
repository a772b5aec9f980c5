// Lock-screen approvals (Web Push) in Debian's chromium against a real Mosquitto and the device's
// real approver, PhonePush and push endpoint, on loopback, the push service standing in through
// CDP (test/web/push-world.ts): (1) the device asks → the service worker has shown the verified
// notification; (2) Approve tapped on it (notificationclick dispatched in the worker) → the device
// holds the verified decision, the worker connecting to the broker for it. Beside them, in the same
// run and browser, the open-app path: request → card visible, tap Approve → decision held.
import { performance } from 'node:perf_hooks'
import type { Worker } from 'playwright-core'
import { freePort, mosquittoBroker } from '../test/helpers/brokers.js'
import { missingCommands } from '../test/helpers/system.js'
import { pairAndConnect, pairLink } from '../test/web/app-harness.js'
import { missingChromium } from '../test/web/browser.js'
import { ask } from '../test/web/device-side.js'
import { launchPushPhone } from '../test/web/push-browser.js'
import { pushWorld } from '../test/web/push-world.js'
import { buildApp, serveApp } from '../test/web/serve-app.js'
import { machineLine, quantile } from './machine.js'

const N = Number(process.env.NOCTURN_BENCH_PUSH_N ?? 30)
const WARMUP = 3
if (missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()) process.exit(0)

const now = () => performance.timeOrigin + performance.now()
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `p50 ${quantile(s, 0.5).toFixed(1)} ms · p99 ${quantile(s, 0.99).toFixed(1)} ms · max ${(s.at(-1) ?? 0).toFixed(1)} ms (n=${s.length})`
}

const broker = mosquittoBroker(await freePort(), { websocketPort: await freePort() })
await broker.start()
const app = await buildApp()
const server = await serveApp(app.dir, { brokerWsUrl: broker.wsUrl ?? '', prefix: 'nocturn/v1' })
const w = await pushWorld(broker)
const phone = await launchPushPhone(server.url)
w.attach(phone)

/** In the worker: when each notice (id and phase) was shown, on the worker's clock (epoch ms). */
async function timeNotices(worker: Worker): Promise<void> {
  await worker.evaluate(`(() => {
    if (self.__shown) return;
    self.__shown = {};
    const reg = self.registration;
    const show = reg.showNotification.bind(reg);
    reg.showNotification = (title, o) => show(title, o).then(() => {
      self.__shown[o.data.id + ':' + o.data.phase] = performance.timeOrigin + performance.now();
    });
  })()`)
}

function shownAt(worker: Worker, id: string, phase: string): Promise<number> {
  const k = JSON.stringify(`${id}:${phase}`)
  return worker.evaluate(`new Promise((resolve, reject) => {
    const end = Date.now() + 15000;
    const look = () => self.__shown[${k}] ? resolve(self.__shown[${k}])
      : Date.now() > end ? reject(new Error('not shown: ' + ${k})) : setTimeout(look, 1);
    look();
  })`) as Promise<number>
}

try {
  await pairAndConnect(phone, pairLink(server.url, w, 'anna', broker.url), 'anna', w.deviceId)
  const end = Date.now() + 20_000
  while (w.store.push.pushSubscriptions('anna').length === 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20))
  }
  if (w.store.push.pushSubscriptions('anna').length === 0)
    throw new Error('the app never subscribed')

  // --- the phone in a pocket: the app closed, the service worker alone
  await phone.page.goto('about:blank')
  const pushShow: number[] = []
  const pushTap: number[] = []
  let worker: Worker | undefined
  for (let i = 0; i < N + WARMUP; i++) {
    const at = now()
    const q = ask(w)
    const decided = q.decision.then(() => now())
    if (!worker) {
      worker = await phone.pushWorker()
      await timeNotices(worker)
    }
    // The first push starts the worker: its notice is timed once the timer is in place.
    const shown = i === 0 ? Number.NaN : await shownAt(worker, q.id, 'asking')
    if (i === 0) {
      while ((await phone.notices()).every((n) => n.data?.id !== q.id)) {
        await new Promise((r) => setTimeout(r, 10))
      }
    }
    const tapAt = (await worker.evaluate(`self.registration.getNotifications().then((ns) => {
      const n = ns.find((x) => x.data && x.data.id === ${JSON.stringify(q.id)});
      const t = performance.timeOrigin + performance.now();
      self.dispatchEvent(new NotificationEvent('notificationclick', { notification: n, action: 'approve' }));
      return t;
    })`)) as number
    const decidedAt = await decided
    await shownAt(worker, q.id, 'ended')
    if (i >= WARMUP) {
      pushShow.push(shown - at)
      pushTap.push(decidedAt - tapAt)
    }
  }

  // --- the app open: the same two legs on the card (the push service now forgets this phone)
  w.attach(undefined)
  await phone.page.addInitScript(`
    window.__cards = {};
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('[data-card]')) {
        const id = el.getAttribute('data-card');
        if (!(id in window.__cards)) window.__cards[id] = performance.timeOrigin + performance.now();
      }
    }).observe(document, { childList: true, subtree: true });
  `)
  await phone.page.goto(server.url)
  await phone.page.waitForSelector('body[data-ready="true"]')
  await phone.page.locator('nav [data-tab="approvals"]').click()
  const appShow: number[] = []
  const appTap: number[] = []
  for (let i = 0; i < N + WARMUP; i++) {
    const at = now()
    const q = ask(w)
    const decided = q.decision.then(() => now())
    await phone.page.locator(`[data-card="${q.id}"] button.approve`).waitFor()
    const shown = (await phone.page.evaluate(`window.__cards[${JSON.stringify(q.id)}]`)) as number
    const tapAt = (await phone.page.evaluate(`(() => {
      const b = document.querySelector('[data-card="${q.id}"] button.approve');
      const t = performance.timeOrigin + performance.now();
      b.click();
      return t;
    })()`)) as number
    const decidedAt = await decided
    if (i >= WARMUP) {
      appShow.push(shown - at)
      appTap.push(decidedAt - tapAt)
    }
  }

  process.stdout.write(
    [
      machineLine(),
      `push (service worker, app closed) · device asks → verified notification shown: ${stats(pushShow)}`,
      `push · Approve tapped on the notification → device holds the verified decision: ${stats(pushTap)}`,
      `app open (same browser) · device asks → card visible: ${stats(appShow)}`,
      `app open · tap Approve → device holds the verified decision: ${stats(appTap)}`,
      '',
    ].join('\n'),
  )
} finally {
  await phone.close()
  await w.close()
  await server.close()
  app.remove()
  await broker.stop()
}
