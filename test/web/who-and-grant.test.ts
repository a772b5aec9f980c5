import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { openTab, shownText } from './app-harness.js'
import { missingChromium } from './browser.js'
import { storedExchange } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()
const TIME = String.raw`\d\d:\d\d(?: [AP]M)?`

/**
 * Issue 44, items 4 and 5 as the app shows them: who typed each message, and what a remembered yes
 * allowed in the History — both read from the speaker over signed requests on Mosquitto.
 */
describe.skipIf(skip !== undefined)(
  'the phone app: who typed it, and what a remembered yes allowed',
  { timeout: 90_000 },
  () => {
    const suite = webSuite()

    it('Chats say "Typed by Ben"; History shows the call Anna\'s yes allowed, with whose yes, when and until when', async () => {
      const w = await suite.world()
      const anna = await suite.phone('anna', w)
      const ben = await suite.phone('ben', w)
      // Ben types (from his phone, over the broker); Anna says yes for an hour.
      const benTypes = await w.phone('ben')
      const annaDecides = await w.approvals('anna')
      w.server.queueGenerate(
        { functionCalls: [{ id: 'p1', name: 'set_light', args: { room: 'porch' } }] },
        { text: 'The porch light is on.' },
      )
      const first = benTypes.say('new', 'Switch on the porch light')
      await until(() => w.asked.length === 1, 'the gate to ask')
      const asked = await annaDecides.waitFor(w.asked[0]?.id ?? '')
      await annaDecides.decide(asked.id, 'approve', { until: Date.now() + 3_600_000 })
      const c = (await first).conversation
      // Again: the grant answers, nobody is asked.
      w.server.queueGenerate(
        { functionCalls: [{ id: 'p2', name: 'set_light', args: { room: 'porch' } }] },
        { text: 'It is on again.' },
      )
      await benTypes.say(c, 'Switch on the porch light again')
      expect(w.asked).toHaveLength(1)
      expect(w.lit).toEqual(['porch', 'porch'])

      // A chat spoken in the room that Ben carried on by typing, and one typed on a speaker that did
      // not yet keep who typed (stored without `by`, as an older speaker's summary comes).
      const spoken = storedExchange(w, 'What time is it?', 'Noon.')
      w.server.queueGenerate({ text: 'Still noon.' })
      await benTypes.say(spoken, 'And now?')
      const older = w.feed.createConversation({ channel: 'text', at: Date.now() - 30_000 })
      w.feed.append(older.id, { role: 'user', text: 'Hello?', channel: 'text', at: Date.now() })

      // Anna's Chats list: who typed each chat, without opening it (two phones' chats told apart).
      await openTab(anna.page, 'chats')
      const meta = (p: Page, id: string) =>
        shownText(p.locator(`[data-conversation="${id}"] .chat-meta`))
      await anna.page.locator(`[data-conversation="${older.id}"]`).waitFor()
      const rest = ` · ${w.deviceId} · Today ${TIME}$`
      expect(await meta(anna.page, c)).toMatch(new RegExp(`^Typed by Ben${rest}`))
      expect(await meta(anna.page, spoken)).toMatch(
        new RegExp(`^Spoken in the room, continued by Ben${rest}`),
      )
      expect(await meta(anna.page, older.id)).toMatch(new RegExp(`^Typed${rest}`))

      // Anna's Chats: Ben's words, each saying Ben typed them, and when.
      await anna.page.locator(`[data-conversation="${c}"]`).click()
      const typed = anna.page.locator('.msg.user.typed')
      await typed.nth(1).waitFor()
      expect(await typed.count()).toBe(2)
      for (const i of [0, 1]) {
        expect(await shownText(typed.nth(i).locator('.who'))).toMatch(
          new RegExp(`^Typed by Ben · ${TIME}\\s*:?$`),
        )
      }
      // Ben's own Chats say it was him, in the list and in the chat.
      await openTab(ben.page, 'chats')
      await ben.page.locator(`[data-conversation="${c}"]`).waitFor()
      expect(await meta(ben.page, c)).toMatch(new RegExp(`^Typed by you${rest}`))
      await ben.page.locator(`[data-conversation="${c}"]`).click()
      const own = ben.page.locator('.msg.user.typed').first()
      await own.waitFor()
      expect(await shownText(own.locator('.who'))).toMatch(new RegExp(`^Typed by you · ${TIME}`))

      // Ben's History: the asked one, and the one Anna's remembered yes allowed, in words.
      await openTab(ben.page, 'history')
      const covered = ben.page.locator('[data-ending][data-covered="true"]')
      await covered.waitFor()
      const kept = w.store.history.list({ limit: 10 })
      expect(kept.map((e) => [e.state, e.by, e.coveredBy?.by ?? null])).toEqual([
        ['approved', 'anna', 'anna'],
        ['approved', 'anna', null],
      ])
      expect(await covered.getAttribute('data-ending')).toBe(kept[0]?.id)
      const text = await shownText(covered)
      expect(text).toMatch(new RegExp(`^${TIME} · ${w.deviceId} · typed on this phone`))
      expect(text).toContain('Switch on the porch light')
      expect(text).toContain('You typed: Switch on the porch light again')
      expect(text).toMatch(
        new RegExp(
          `Allowed by Anna's yes at ${TIME}, until (?:tomorrow )?${TIME}\\. Nobody was asked\\.`,
        ),
      )
      const asking = ben.page.locator(`[data-ending="${asked.id}"]`)
      expect(await shownText(asking)).toContain("Approved on Anna's phone.")
      // Anna sees the same entry as her own yes.
      await openTab(anna.page, 'history')
      const hers = anna.page.locator(`[data-ending="${kept[0]?.id}"]`)
      await hers.waitFor()
      expect(await shownText(hers)).toMatch(new RegExp(`Allowed by your yes at ${TIME}, until`))
    })
  },
)
