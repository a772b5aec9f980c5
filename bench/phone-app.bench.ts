// The phone app in Debian's chromium against a real Mosquitto (WebSocket listener) and the device's
// real MQTT approver, on loopback: (1) the device publishes a request → the card is visible in the
// page; (2) a tap on Approve → the device holds the verified decision. Beside it, in the same run:
// the terminal phone (src/phone, MQTT over TCP) doing the same, and a bare MQTT-over-WebSocket
// publish → reply between two clients (the broker's own share). Also the app's gzipped size and its
// first render with the CPU throttled 4× (CDP Emulation.setCPUThrottlingRate).
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { gzipSync } from 'node:zlib'
import mqtt from 'mqtt'
import { digestOf } from '../src/core/canonical.js'
import { silentLogger } from '../src/core/logger.js'
import { PhoneClient } from '../src/phone/client.js'
import { pairingUri } from '../src/protocol/index.js'
import { freePort, mosquittoBroker, PREFIX, USERS } from '../test/helpers/brokers.js'
import { testDesk, testDeviceMqtt, testPhoneLink } from '../test/helpers/device-mqtt.js'
import { missingCommands } from '../test/helpers/system.js'
import { launchChromium, missingChromium } from '../test/web/browser.js'
import { buildApp, serveApp } from '../test/web/serve-app.js'
import { machineLine, quantile } from './machine.js'

const N = Number(process.env.NOCTURN_BENCH_PHONE_N ?? 60)
const WARMUP = 5
if (missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()) process.exit(0)

const now = () => performance.timeOrigin + performance.now()
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `p50 ${quantile(s, 0.5).toFixed(1)} ms · p99 ${quantile(s, 0.99).toFixed(1)} ms · max ${(s.at(-1) ?? 0).toFixed(1)} ms (n=${s.length})`
}

const broker = mosquittoBroker(await freePort(), { websocketPort: await freePort() })
await broker.start()
const wsUrl = broker.wsUrl ?? ''
const keys = new Map([
  ['anna', randomBytes(32)],
  ['ben', randomBytes(32)],
])
const device = testDeviceMqtt(broker.url, 'bench', () => keys)
await device.approver.ready()
const desk = testDesk(device)
const app = await buildApp()
const server = await serveApp(app.dir, { brokerWsUrl: wsUrl, prefix: PREFIX })
const chromium = await launchChromium()

let seq = 0
function ask(): { id: string; at: number; decided: Promise<number> } {
  const id = `bench-${seq++}`
  const args = { room: 'hall' }
  const t = Date.now()
  const at = now()
  const decided = desk
    .request(
      {
        id,
        tool: 'set_light',
        action: 'switch on the hall light',
        args,
        argsDigest: digestOf(args),
        channel: 'voice',
        conversationId: 'bench',
        critical: false,
        createdAt: t,
        expiresAt: t + 60_000,
      },
      new AbortController().signal,
    )
    .then(
      () => now(),
      () => Number.NaN,
    )
  return { id, at, decided }
}

try {
  // --- the app in chromium
  const context = await chromium.browser.newContext({ viewport: { width: 360, height: 740 } })
  // Records when each card first appears, on the page's own clock (epoch ms, sub-ms).
  await context.addInitScript(`
    window.__shown = {};
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('[data-card]')) {
        const id = el.getAttribute('data-card');
        if (!(id in window.__shown)) window.__shown[id] = performance.timeOrigin + performance.now();
      }
    }).observe(document, { childList: true, subtree: true });
  `)
  const page = await context.newPage()
  const uri = pairingUri({
    broker: broker.url,
    device: 'bench',
    prefix: PREFIX,
    phone: 'anna',
    key: keys.get('anna')!,
  })
  await page.goto(`${server.url}#pair=${encodeURIComponent(uri)}`)
  const card = page.locator('[data-speaker="bench"]')
  await card.getByLabel(/Password for this phone on/).fill(USERS.anna.password)
  await card.getByRole('button', { name: 'Connect' }).click()
  await card.locator('[data-status]', { hasText: 'Online' }).waitFor()
  await page.locator('nav [data-tab="approvals"]').click()

  const appShow: number[] = []
  const appTap: number[] = []
  for (let i = 0; i < N + WARMUP; i++) {
    const q = ask()
    await page.locator(`[data-card="${q.id}"] button.approve`).waitFor()
    const shownAt = (await page.evaluate(`window.__shown[${JSON.stringify(q.id)}]`)) as number
    const tapAt = (await page.evaluate(`(() => {
      const b = document.querySelector('[data-card="${q.id}"] button.approve');
      const t = performance.timeOrigin + performance.now();
      b.click();
      return t;
    })()`)) as number
    const decidedAt = await q.decided
    if (i >= WARMUP) {
      appShow.push(shownAt - q.at)
      appTap.push(decidedAt - tapAt)
    }
  }

  // --- the terminal phone (reference client, TCP), the same two legs
  const phone = new PhoneClient({
    link: testPhoneLink,
    pairing: {
      broker: broker.url,
      device: 'bench',
      prefix: PREFIX,
      phone: 'ben',
      key: keys.get('ben')!,
    },
    ...USERS.ben,
    logger: silentLogger,
  })
  await phone.start()
  const termShow: number[] = []
  const termTap: number[] = []
  for (let i = 0; i < N + WARMUP; i++) {
    const q = ask()
    await phone.waitFor(q.id, 10_000)
    const shownAt = now()
    const tapAt = now()
    await phone.decide(q.id, 'approve', 'once')
    const decidedAt = await q.decided
    if (i >= WARMUP) {
      termShow.push(shownAt - q.at)
      termTap.push(decidedAt - tapAt)
    }
  }
  await phone.close()

  // --- bare MQTT over WebSocket: publish → reply between two clients (device user: all topics)
  const a = await mqtt.connectAsync(wsUrl, { ...USERS.device, reconnectPeriod: 0 })
  const b = await mqtt.connectAsync(wsUrl, { ...USERS.intruder, reconnectPeriod: 0 })
  await b.subscribeAsync(`${PREFIX}/ping/req`, { qos: 1 })
  b.on('message', (_t, p) => void b.publishAsync(`${PREFIX}/ping/res`, p, { qos: 1 }))
  await a.subscribeAsync(`${PREFIX}/ping/res`, { qos: 1 })
  const pong: number[] = []
  for (let i = 0; i < N * 4 + WARMUP; i++) {
    const t0 = now()
    const got = new Promise<void>((r) => a.once('message', () => r()))
    await a.publishAsync(`${PREFIX}/ping/req`, String(i), { qos: 1 })
    await got
    if (i >= WARMUP) pong.push(now() - t0)
  }
  await a.endAsync()
  await b.endAsync()

  // --- size of what the device serves
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) =>
      statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)],
    )
  let raw = 0
  let gz = 0
  let jsGz = 0
  for (const f of files(app.dir)) {
    const body = readFileSync(f)
    const z = gzipSync(body, { level: 9 }).length
    raw += body.length
    gz += z
    if (f.endsWith('.js') && !f.endsWith('sw.js')) jsGz = z
  }

  // --- first render with the CPU throttled 4×: a paired phone opening the app, a request pending
  const q = ask()
  const fcp: number[] = []
  const ready: number[] = []
  const cardShown: number[] = []
  for (let i = 0; i < 5; i++) {
    const p = await context.newPage()
    const cdp = await context.newCDPSession(p)
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 })
    await p.goto(server.url)
    await p.locator(`[data-card="${q.id}"]`).waitFor()
    const t = (await p.evaluate(`(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      ready: performance.getEntriesByName('nocturn-ready')[0]?.startTime ?? NaN,
      card: window.__shown[${JSON.stringify(q.id)}] - performance.timeOrigin,
    }))()`)) as { fcp: number; ready: number; card: number }
    fcp.push(t.fcp)
    ready.push(t.ready)
    cardShown.push(t.card)
    await p.close()
  }
  desk.withdrawAll()
  await context.close()

  const med = (xs: number[]) =>
    quantile(
      [...xs].sort((x, y) => x - y),
      0.5,
    ).toFixed(0)
  process.stdout.write(
    [
      machineLine(),
      `app (chromium, MQTT over WebSocket) · request published → card visible: ${stats(appShow)}`,
      `app · tap Approve → device holds the verified decision: ${stats(appTap)}`,
      `terminal phone (src/phone, TCP) · request → verified: ${stats(termShow)}`,
      `terminal phone · decide → device holds it: ${stats(termTap)}`,
      `bare MQTT over WebSocket, publish → reply (QoS 1): ${stats(pong)}`,
      `size: ${(gz / 1024).toFixed(1)} KiB gzipped in all (JS bundle ${(jsGz / 1024).toFixed(1)} KiB), ${(raw / 1024).toFixed(1)} KiB raw`,
      `first render, CPU 4× throttled (median of 5 loads): first contentful paint ${med(fcp)} ms · app ready ${med(ready)} ms · pending card visible ${med(cardShown)} ms`,
      '',
    ].join('\n'),
  )
} finally {
  await chromium.close()
  await server.close()
  app.remove()
  await device.close()
  await broker.stop()
}
