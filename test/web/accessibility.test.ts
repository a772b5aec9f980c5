import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import type { CallContext, Tool } from '../../src/core/types.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { lightTool } from '../phone/world.js'
import { openTab } from './app-harness.js'
import { missingChromium } from './browser.js'
import { ask, storedExchange } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

interface AxeResult {
  violations: Array<{ id: string; nodes: Array<{ target: string[]; failureSummary?: string }> }>
}

/** axe-core run in the page as it is now: every WCAG 2.x A/AA rule and the best practices. */
async function axe(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe'))?.toString().includes('object')) {
    await page.addScriptTag({ content: AXE })
  }
  const r = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as AxeResult
  return r.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')}`))
}

/** Every control a finger presses, smaller than 44×44 CSS px (a radio counts with its label). */
async function smallTargets(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const out = []
    for (const el of document.querySelectorAll('button, a[href], summary, select, textarea, input:not([type=radio]), label:has(input[type=radio])')) {
      const r = el.getBoundingClientRect()
      if (r.width === 0 && r.height === 0) continue
      if (r.width < 44 || r.height < 44) out.push(el.tagName.toLowerCase() + ' "' + (el.textContent || el.getAttribute('aria-label') || '').trim().slice(0, 30) + '" ' + Math.round(r.width) + 'x' + Math.round(r.height))
    }
    return out
  })()`)) as string[]
}

describe.skipIf(skip !== undefined)(
  'accessibility of every screen (axe-core, light and dark)',
  {
    timeout: 120_000,
  },
  () => {
    const suite = webSuite()

    for (const scheme of ['light', 'dark'] as const) {
      it(`${scheme}: 0 axe violations and every tap target at least 44×44 on every screen`, async () => {
        const w = await suite.world()
        const p = await suite.blank({ colorScheme: scheme })
        await suite.phone('anna', w, p)
        const q = ask(w, {
          action: 'switch on the hall light',
          args: { room: 'hall', level: 80 },
          said: 'Make the hall brighter, please.',
        })
        await suite.card(p, q.id).waitFor()
        const found: string[] = []
        const check = async (screen: string) => {
          for (const v of await axe(p.page)) found.push(`${screen}: ${v}`)
          for (const t of await smallTargets(p.page)) found.push(`${screen}: small target ${t}`)
        }
        await check('approvals (pending)')
        await suite
          .card(p, q.id)
          .getByRole('button', { name: /^Approve/ })
          .click()
        await p.page.locator(`[data-card="${q.id}"][data-state="approved"]`).waitFor()
        await check('approvals (ended)')
        // A remembered yes, so Grants shows one: the porch light, approved for one hour.
        const ctx: CallContext = {
          signal: new AbortController().signal,
          channel: 'text',
          conversationId: 'conv-a11y',
          callId: 'a11y',
          gate: w.gate,
          logger: silentLogger,
          onPending: () => {},
        }
        const porch = w.gate.check(lightTool([]) as Tool, { room: 'porch' }, ctx)
        await until(() => w.asked.length === 1, 'the porch light asked')
        const porchCard = suite.card(p, w.asked[0]?.id ?? '')
        await porchCard.getByLabel('For one hour').check()
        await porchCard.getByRole('button', { name: /^Approve/ }).click()
        await porch
        // Again: the remembered yes allows it, and the History shows what it allowed.
        await w.gate.check(lightTool([]) as Tool, { room: 'porch' }, { ...ctx, callId: 'a11y-2' })
        // A conversation spoken, then continued by typing on Ben's phone: both kinds of bubble.
        const chat = storedExchange(w, 'What time does the plumber come?', 'Half past ten.')
        w.feed.append(chat, {
          role: 'user',
          text: 'Thanks.',
          channel: 'text',
          at: Date.now(),
          by: 'ben',
        })
        // A refused message, so Diagnostics has a sentence and its code to check.
        const intruder = await w.raw()
        await intruder.publishAsync(w.topics.request('junk'), 'not json', { qos: 1 })
        for (const tab of ['chats', 'history', 'grants', 'speakers'] as const) {
          await openTab(p.page, tab)
          await p.page.waitForTimeout(300)
          await check(tab)
        }
        await openTab(p.page, 'history')
        await p.page.locator('[data-ending][data-covered="true"]').waitFor()
        await check('history (what a remembered yes allowed)')
        await openTab(p.page, 'chats')
        await p.page.locator(`[data-conversation="${chat}"]`).click()
        await p.page.locator('.msg.user.typed', { hasText: 'Typed by Ben' }).waitFor()
        await check('a conversation')
        await openTab(p.page, 'grants')
        await p.page.locator('[data-grant]').waitFor()
        await check('grants (one remembered yes)')
        await openTab(p.page, 'speakers')
        await p.page.locator('[data-reason="malformed-json"]').waitFor()
        // Every disclosure open: the technical details are checked too.
        await p.page.evaluate(`
          for (const d of document.querySelectorAll('details')) d.open = true
        `)
        await check('speakers (details open)')
        expect(found).toEqual([])
      })
    }
  },
)
