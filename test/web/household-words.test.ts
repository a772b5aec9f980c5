import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import type { CallContext, Tool } from '../../src/core/types.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { lightTool } from '../phone/world.js'
import { openTab, shownText } from './app-harness.js'
import { missingChromium } from './browser.js'
import { ask, storedExchange } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()

/** What a household must never read: a tool name or JSON key, or a time as a machine writes it. */
const CODE_WORDS = /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/
const RAW_TIMES = [
  /\b\d{10,13}\b/, // ms or s since the epoch
  /\d{4}-\d\d-\d\dT\d\d/, // ISO 8601
  /\b\d{1,2}\/\d{1,2}\/\d{4}\b/, // 12/5/2026
  /\b\d{1,2}:\d\d:\d\d\b/, // with seconds
]

async function checkWords(page: Page, screen: string): Promise<string> {
  const text = await shownText(page.locator('body'))
  expect(text, `${screen}: a code word`).not.toMatch(CODE_WORDS)
  for (const raw of RAW_TIMES) expect(text, `${screen}: a raw time`).not.toMatch(raw)
  return text
}

/** Issue 44, items 3 and 4, and "a household's words" on every screen. */
describe.skipIf(skip !== undefined)(
  'the phone app in a household’s words',
  { timeout: 90_000 },
  () => {
    const suite = webSuite()

    it('no screen shows a tool name, a JSON key or a raw timestamp; chats say who said what, where, how and when', async () => {
      const w = await suite.world()
      const anna = await suite.phone('anna', w)
      const spoken = storedExchange(w, 'What time does the plumber come?', 'Half past ten.')
      w.feed.append(spoken, {
        role: 'tool',
        toolCallId: 't1',
        toolName: 'set_light',
        args: { room: 'porch' },
        outcome: { ok: true, value: { lit: true } },
        channel: 'voice',
        at: Date.now() - 57_000,
      })
      // A remembered yes (a grant) made the way a household makes one: a card approved for an hour.
      const ctx: CallContext = {
        signal: new AbortController().signal,
        channel: 'text',
        conversationId: 'conv-words',
        callId: 'w1',
        gate: w.gate,
        logger: silentLogger,
        onPending: () => {},
      }
      const granted = w.gate.check(lightTool([]) as Tool, { room: 'porch' }, ctx)
      await until(() => w.asked.length === 1, 'the gate to ask')
      const first = suite.card(anna, w.asked[0]?.id ?? '')
      await first.getByLabel('For one hour').check()
      await first.getByRole('button', { name: /^Approve/ }).click()
      await granted
      // The same call again: the grant answers, nobody is asked, and the History keeps it.
      await w.gate.check(lightTool([]) as Tool, { room: 'porch' }, { ...ctx, callId: 'w2' })
      expect(w.asked).toHaveLength(1)
      const q = ask(w, {
        tool: 'unlock_door',
        action: 'unlock the front door',
        args: { door_name: 'front' },
        critical: true,
        said: 'Open the door.',
      })
      await suite.card(anna, q.id).waitFor()
      await checkWords(anna.page, 'Approvals')

      await openTab(anna.page, 'grants')
      const grant = anna.page.locator('[data-grant]')
      await grant.waitFor()
      // An hour from now: past 23:00 it ends tomorrow, and the screen says so.
      expect(await shownText(grant)).toMatch(
        /^Switch on the porch light\n+room: porch\n+When typed on a phone, until (tomorrow )?\d\d:\d\d( [AP]M)?\. You said yes\./,
      )
      await checkWords(anna.page, 'Grants')

      await openTab(anna.page, 'history')
      await anna.page.locator('[data-ending][data-covered="true"]').waitFor()
      await checkWords(anna.page, 'History')

      await openTab(anna.page, 'chats')
      const item = anna.page.locator(`[data-conversation="${spoken}"]`)
      await item.waitFor()
      expect(await shownText(item.locator('.chat-meta'))).toMatch(
        new RegExp(`^Spoken in the room · ${w.deviceId} · Today \\d\\d:\\d\\d`),
      )
      await checkWords(anna.page, 'Chats')
      await item.click()
      const said = anna.page.locator('.msg.user.spoken').first()
      await said.waitFor()
      // Visible, not only to a screen reader: on screen, in the bubble's own text.
      const who = said.locator('.who')
      expect(await shownText(who)).toMatch(/^Said in the room · \d\d:\d\d/)
      const box = await who.boundingBox()
      const bubble = await said.boundingBox()
      expect(box && bubble && box.x >= bubble.x && box.width > 20).toBe(true)
      expect(await shownText(anna.page.locator('.msg.assistant').first())).toMatch(
        new RegExp(`^${w.deviceId} · \\d\\d:\\d\\d`),
      )
      expect(await shownText(anna.page.locator('.msg.tool'))).toContain(
        'Switch on the porch light: done.',
      )
      w.server.queueGenerate({ text: 'Nothing else today.' })
      await anna.page.getByLabel('Message to the speaker').fill('Anything else?')
      await anna.page.getByRole('button', { name: 'Send' }).click()
      const typed = anna.page.locator('.msg.user.typed[data-channel="text"]', {
        hasText: 'Anything else?',
      })
      await typed.waitFor()
      expect(await shownText(typed.locator('.who'))).toMatch(/^Typed by you · \d\d:\d\d/)
      // Spoken and typed look different, not only read differently.
      // The test tree has no DOM types: the page's getComputedStyle, typed by hand.
      type Styles = { getComputedStyle(e: unknown): { backgroundColor: string } }
      const fill = (sel: string) =>
        anna.page
          .locator(sel)
          .first()
          .evaluate((el) => (globalThis as unknown as Styles).getComputedStyle(el).backgroundColor)
      expect(await fill('.msg.user.spoken')).not.toBe(await fill('.msg.user.typed'))
      await checkWords(anna.page, 'a chat')

      await openTab(anna.page, 'speakers')
      await checkWords(anna.page, 'Speakers')
    })
  },
)
