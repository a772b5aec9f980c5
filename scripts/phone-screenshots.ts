/**
 * Phone-sized screenshots of the app's main screens into docs/phone-app/, taken from the real
 * thing: the app built as `npm run build` builds it, Mosquitto with its WebSocket listener, two
 * devices (approver + conversation endpoint) and Debian's chromium. Run: `npx tsx scripts/phone-screenshots.ts`.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pairingUri } from '../src/protocol/index.js'
import { freePort, mosquittoBroker, USERS } from '../test/helpers/brokers.js'
import { type PhoneWorld, phoneWorld } from '../test/phone/world.js'
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

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true })
  const broker = mosquittoBroker(await freePort(), { websocketPort: await freePort() })
  await broker.start()
  const app = await buildApp()
  const server = await serveApp(app.dir, { brokerWsUrl: broker.wsUrl, prefix: 'nocturn/v1' })
  const chromium = await launchChromium()
  const kitchen = await phoneWorld(broker)
  const bedroom = await phoneWorld(broker)
  try {
    const t = Date.now() - 15 * 60_000
    const c = kitchen.feed.createConversation({ channel: 'voice', at: t })
    const say = (role: 'user' | 'assistant', text: string, dt: number) =>
      kitchen.feed.append(
        c.id,
        role === 'user'
          ? { role, text, channel: 'voice', at: t + dt }
          : { role, text, toolCalls: [], channel: 'voice', at: t + dt },
      )
    say('user', 'What time does the plumber come?', 1000)
    say('assistant', 'The plumber said half past ten. Shall I let them in when they ring?', 3000)
    say('user', 'Yes, open the front door for them.', 9000)
    say('assistant', "I've asked your phone; the door opens once someone says yes.", 11000)
    kitchen.device.status.setState('listening', false)
    bedroom.device.status.setState('muted', true)

    // Dark first: the light pass goes on to end cards and stop a speaker.
    for (const scheme of ['dark', 'light'] as const) {
      const context = await chromium.browser.newContext({
        viewport: { width: 360, height: 740 },
        deviceScaleFactor: 2,
        colorScheme: scheme,
      })
      const page = await context.newPage()
      for (const [w, name] of [
        [kitchen, 'Kitchen'],
        [bedroom, 'Bedroom'],
      ] as const) {
        await page.goto(link(server.url, w, name, broker.url))
        await page.waitForSelector('body[data-ready="true"]')
        const card = page.locator(`[data-speaker="${w.deviceId}"]`)
        await card.getByLabel(/Password for this phone on/).fill(USERS.anna.password)
        await card.getByRole('button', { name: 'Connect' }).click()
        await card.locator('[data-status]', { hasText: 'Online' }).waitFor()
      }
      const q = ask(kitchen, {
        tool: 'unlock_door',
        action: 'unlock the front door',
        args: { door: 'front' },
        critical: true,
        expiresInMs: 110_000,
        said: 'Yes, open the front door for them.',
      })
      const q2 = ask(bedroom, { action: 'switch on the bedroom light', args: { room: 'bedroom' } })
      // The "paired" and "connecting" notices have done their job.
      for (const close of await page.locator('#notice .close').all()) await close.click()
      await page.locator('nav [data-tab="approvals"]').click()
      await page.locator(`[data-card="${q.id}"]`).waitFor()
      await page.locator(`[data-card="${q2.id}"]`).waitFor()
      await page.evaluate('window.scrollTo(0, 0)')
      await page.screenshot({ path: join(OUT, `approvals-${scheme}.png`) })
      if (scheme === 'light') {
        // A card with its context: what was said in the room, signed with the request.
        // (The tab bar, fixed at the bottom, would cover the card's foot in a picture of it alone.)
        await page.evaluate(`document.querySelector('nav').style.visibility = 'hidden'`)
        await page.locator(`[data-card="${q.id}"]`).screenshot({ path: join(OUT, 'context.png') })
        await page.evaluate(`document.querySelector('nav').style.visibility = ''`)
        await page.locator('nav [data-tab="speakers"]').click()
        await page.locator('.speaker').first().waitFor()
        await page.evaluate('window.scrollTo(0, 0)')
        await page.screenshot({ path: join(OUT, 'speakers.png') })
        await page.locator('nav [data-tab="chats"]').click()
        await page.locator(`[data-conversation="${c.id}"]`).click()
        await page.locator('.msg.assistant').first().waitFor()
        await page.evaluate('window.scrollTo(0, document.body.scrollHeight)')
        await page.screenshot({ path: join(OUT, 'conversation.png') })
        // A finished card: approved on this phone, with what was remembered.
        await page.locator('nav [data-tab="approvals"]').click()
        await page.locator(`[data-card="${q2.id}"]`).getByLabel('For one hour').check()
        await page
          .locator(`[data-card="${q2.id}"]`)
          .getByRole('button', { name: /^Approve/ })
          .click()
        await page.locator(`[data-card="${q2.id}"][data-state="approved"]`).waitFor()
        await page.locator(`[data-card="${q.id}"]`).getByRole('button', { name: /^Deny/ }).click()
        await page.locator(`[data-card="${q.id}"][data-state="denied"]`).waitFor()
        await page.evaluate('window.scrollTo(0, 0)')
        await page.screenshot({ path: join(OUT, 'finished.png') })
        // The history of both speakers, grouped by day.
        await page.locator('nav [data-tab="history"]').click()
        await page.locator(`[data-ending="${q.id}"]`).waitFor()
        await page.screenshot({ path: join(OUT, 'history.png') })
        // A speaker gone away: its device stops, the broker says so (its last will).
        await bedroom.device.close()
        await page.locator('nav [data-tab="approvals"]').click()
        await page.locator('[data-health="connected"].down').waitFor()
        await page.screenshot({ path: join(OUT, 'offline-speaker.png') })
      }
      await context.close()
      kitchen.approver.withdrawAll()
      bedroom.approver.withdrawAll()
    }
    process.stdout.write(`screenshots written to ${OUT}\n`)
  } finally {
    await kitchen.close()
    await bedroom.close()
    await chromium.close()
    await server.close()
    app.remove()
    await broker.stop()
  }
}

await main()
