/**
 * Phone-sized screenshots of every screen of the app, light and dark, into docs/phone-app/, taken
 * from the real thing: the app built as `npm run build` builds it, Mosquitto with its WebSocket
 * listener, two devices (approver, gate, conversation endpoint) and Debian's chromium. Run:
 * `npx tsx scripts/phone-screenshots.ts`.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { silentLogger } from '../src/core/logger.js'
import type { CallContext, Tool } from '../src/core/types.js'
import { pairingUri } from '../src/protocol/index.js'
import { freePort, mosquittoBroker, type TestBroker, USERS } from '../test/helpers/brokers.js'
import { until } from '../test/helpers/wait.js'
import { lightTool, type PhoneWorld, phoneWorld } from '../test/phone/world.js'
import { launchChromium } from '../test/web/browser.js'
import { ask } from '../test/web/device-side.js'
import { buildApp, serveApp } from '../test/web/serve-app.js'

const OUT = fileURLToPath(new URL('../docs/phone-app/', import.meta.url))

function link(appUrl: string, w: PhoneWorld, name: string, broker: string): string {
  const uri = pairingUri({
    broker,
    device: w.deviceId,
    prefix: 'nocturn/v1',
    phone: 'anna',
    key: w.keys.get('anna') ?? Buffer.alloc(32),
  })
  return `${appUrl}#pair=${encodeURIComponent(`${uri}&name=${encodeURIComponent(name)}`)}`
}

/** A spoken exchange from a quarter of an hour ago, continued by typing on Ben's phone. */
function conversation(w: PhoneWorld): string {
  const t = Date.now() - 15 * 60_000
  const c = w.feed.createConversation({ channel: 'voice', at: t })
  const say = (role: 'user' | 'assistant', text: string, dt: number, channel = 'voice' as const) =>
    w.feed.append(
      c.id,
      role === 'user'
        ? { role, text, channel, at: t + dt }
        : { role, text, toolCalls: [], channel, at: t + dt },
    )
  say('user', 'What time does the plumber come?', 1000)
  say('assistant', 'The plumber said half past ten. Shall I let them in when they ring?', 3000)
  say('user', 'Yes, open the front door for them.', 9000)
  say('assistant', "I've asked your phone; the door opens once someone says yes.", 11000)
  w.feed.append(c.id, {
    role: 'user',
    text: 'And switch on the porch light at six.',
    channel: 'text',
    at: t + 60_000,
    // Typed on Ben's phone: the chat says who (issue 44).
    by: 'ben',
  })
  w.feed.append(c.id, {
    role: 'assistant',
    text: 'I will ask before I switch it on.',
    toolCalls: [],
    channel: 'text',
    at: t + 62_000,
  })
  return c.id
}

async function shot(page: Page, name: string, scheme: string, top = true): Promise<void> {
  if (top) await page.evaluate('window.scrollTo(0, 0)')
  await page.screenshot({ path: join(OUT, `${name}-${scheme}.png`) })
}

async function tab(page: Page, name: string): Promise<void> {
  await page.locator(`nav [data-tab="${name}"]`).click()
}

/** One pass of every screen in one colour scheme, with devices of its own. */
async function pass(
  browser: Awaited<ReturnType<typeof launchChromium>>['browser'],
  broker: TestBroker,
  appUrl: string,
  scheme: 'light' | 'dark',
): Promise<void> {
  const kitchen = await phoneWorld(broker)
  const bedroom = await phoneWorld(broker)
  const context = await browser.newContext({
    viewport: { width: 360, height: 740 },
    deviceScaleFactor: 2,
    colorScheme: scheme,
  })
  try {
    const chat = conversation(kitchen)
    kitchen.device.status.setState('listening', false)
    bedroom.device.status.setState('muted', true)
    const page = await context.newPage()
    // First contact: nothing paired yet, the app explains where a pairing comes from.
    await page.goto(appUrl)
    await page.waitForSelector('body[data-ready="true"]')
    await shot(page, 'pair', scheme)
    for (const [w, name] of [
      [kitchen, 'Kitchen'],
      [bedroom, 'Bedroom'],
    ] as const) {
      await page.goto(link(appUrl, w, name, broker.url))
      await page.waitForSelector('body[data-ready="true"]')
      // This broker wants each phone's password: the app asks once it refused the phone.
      await page
        .locator(`[data-speaker-health="${w.deviceId}"][data-health="needs-login"]`)
        .waitFor()
      await tab(page, 'speakers')
      const card = page.locator(`[data-speaker="${w.deviceId}"]`)
      await card.getByLabel(/Password for this phone on/).fill(USERS.anna.password)
      await card.getByRole('button', { name: 'Connect' }).click()
      await card.locator('[data-status]', { hasText: 'Online' }).waitFor()
    }
    for (const close of await page.locator('#notice .close').all()) await close.click()

    // A remembered yes: the porch light, typed on a phone, approved for one hour.
    const ctx: CallContext = {
      signal: new AbortController().signal,
      channel: 'text',
      conversationId: chat,
      callId: 'porch',
      gate: kitchen.gate,
      logger: silentLogger,
      onPending: () => {},
    }
    const porch = kitchen.gate.check(lightTool([]) as Tool, { room: 'porch' }, ctx)
    await until(() => kitchen.asked.length === 1, 'the porch light asked')
    await tab(page, 'approvals')
    const porchCard = page.locator(`[data-card="${kitchen.asked[0]?.id}"]`)
    await porchCard.getByLabel('For one hour').check()
    await porchCard.getByRole('button', { name: /^Approve/ }).click()
    await porch
    await page.locator('[data-clear-finished]').click()

    const q = ask(kitchen, {
      tool: 'unlock_door',
      action: 'unlock the front door',
      args: { door: 'front' },
      critical: true,
      expiresInMs: 110_000,
      said: 'Yes, open the front door for them.',
    })
    const q2 = ask(bedroom, { action: 'switch on the bedroom light', args: { room: 'bedroom' } })
    await page.locator(`[data-card="${q.id}"]`).waitFor()
    await page.locator(`[data-card="${q2.id}"]`).waitFor()
    await shot(page, 'approvals', scheme)
    // A card with its context: what was said in the room, signed with the request.
    // (The tab bar, fixed at the bottom, would cover the card's foot in a picture of it alone.)
    await page.evaluate(`document.querySelector('nav').style.visibility = 'hidden'`)
    await page.locator(`[data-card="${q.id}"]`).screenshot({
      path: join(OUT, `context-${scheme}.png`),
    })
    await page.evaluate(`document.querySelector('nav').style.visibility = ''`)

    await tab(page, 'speakers')
    await page.locator('.speaker').first().waitFor()
    await shot(page, 'speakers', scheme)
    await tab(page, 'chats')
    await page.locator(`[data-conversation="${chat}"]`).waitFor()
    await shot(page, 'chats', scheme)
    await page.locator(`[data-conversation="${chat}"]`).click()
    await page.locator('.msg.assistant').first().waitFor()
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)')
    await shot(page, 'conversation', scheme, false)
    await tab(page, 'grants')
    await page.locator('[data-grant]').first().waitFor()
    await shot(page, 'grants', scheme)

    // Finished cards: approved on this phone for an hour, and denied.
    await tab(page, 'approvals')
    await page.locator(`[data-card="${q2.id}"]`).getByLabel('For one hour').check()
    await page
      .locator(`[data-card="${q2.id}"]`)
      .getByRole('button', { name: /^Approve/ })
      .click()
    await page.locator(`[data-card="${q2.id}"][data-state="approved"]`).waitFor()
    await page.locator(`[data-card="${q.id}"]`).getByRole('button', { name: /^Deny/ }).click()
    await page.locator(`[data-card="${q.id}"][data-state="denied"]`).waitFor()
    await shot(page, 'finished', scheme)
    // The porch light again: the remembered yes allows it, nobody is asked, the History keeps it.
    await kitchen.gate.check(
      lightTool([]) as Tool,
      { room: 'porch' },
      { ...ctx, callId: 'porch-2' },
    )
    await tab(page, 'history')
    await page.locator(`[data-ending="${q.id}"]`).waitFor()
    await page.locator('[data-ending][data-covered="true"]').waitFor()
    await shot(page, 'history', scheme)
    // A speaker gone away: its device stops, the broker says so (its last will).
    await bedroom.device.close()
    await tab(page, 'approvals')
    await page.locator('[data-clear-finished]').click()
    await page.locator('[data-health="connected"].down').waitFor()
    await shot(page, 'offline-speaker', scheme)
  } finally {
    await context.close()
    await kitchen.close()
    await bedroom.close()
  }
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true })
  const broker = mosquittoBroker(await freePort(), { websocketPort: await freePort() })
  await broker.start()
  const app = await buildApp()
  const server = await serveApp(app.dir, { brokerWsUrl: broker.wsUrl, prefix: 'nocturn/v1' })
  const chromium = await launchChromium()
  try {
    for (const scheme of ['light', 'dark'] as const) {
      await pass(chromium.browser, broker, server.url, scheme)
    }
    process.stdout.write(`screenshots written to ${OUT}\n`)
  } finally {
    await chromium.close()
    await server.close()
    app.remove()
    await broker.stop()
  }
}

await main()
