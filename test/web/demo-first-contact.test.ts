import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPhoneDemo } from '../../src/app/phone-demo.js'
import { silentLogger } from '../../src/core/logger.js'
import { newPhone, openTab, shownText } from './app-harness.js'
import { launchChromium, missingChromium } from './browser.js'
import { buildApp } from './serve-app.js'

/**
 * Issue 44 as it was found: `npm start -- --phone` (the offline demo: its embedded broker takes
 * any phone), the printed link opened in Chromium at a phone's size.
 */
describe.skipIf(missingChromium() !== undefined)(
  'the phone demo, opened from its printed link',
  { timeout: 120_000 },
  () => {
    let app: Awaited<ReturnType<typeof buildApp>>
    let chromium: Awaited<ReturnType<typeof launchChromium>>
    const dir = mkdtempSync(join(tmpdir(), 'nocturn-demo-web-'))
    const stop = new AbortController()
    let ran: Promise<number> | undefined
    let link = ''

    beforeAll(async () => {
      app = await buildApp()
      chromium = await launchChromium()
      link = await new Promise<string>((resolve, reject) => {
        ran = runPhoneDemo({
          signal: stop.signal,
          out: new PassThrough().resume(),
          logger: silentLogger,
          workDir: join(dir, 'work'),
          appPort: 0,
          brokerWsPort: 0,
          appRoot: app.dir,
          onLink: resolve,
        })
        ran.then(() => reject(new Error('the demo ended before printing its link')), reject)
      })
    }, 60_000)
    afterAll(async () => {
      stop.abort()
      await ran
      await chromium?.close()
      app?.remove()
      rmSync(dir, { recursive: true, force: true })
    })

    it('the link lands on the request waiting for a yes, with no password asked, and the fingerprint is offered there', async () => {
      expect(link).toMatch(/^http:\/\/localhost:\d+\/#pair=/)
      const phone = await newPhone(chromium.browser)
      try {
        await phone.page.goto(link)
        const card = phone.page.locator('[data-card]', { hasText: 'Unlock the front door' })
        await card.waitFor({ timeout: 30_000 })
        expect(await phone.page.locator('nav [aria-current="page"]').getAttribute('data-tab')).toBe(
          'approvals',
        )
        expect(await shownText(phone.page.locator('body'))).not.toMatch(/password/i)
        await openTab(phone.page, 'speakers')
        await phone.page.locator('[data-owner-register]').waitFor()
        expect(phone.errors).toEqual([])
      } finally {
        await phone.context.close()
      }
    })

    it('opened at 127.0.0.1 instead, the fingerprint is not offered: it says why and to open localhost', async () => {
      const byNumber = link.replace('//localhost:', '//127.0.0.1:')
      const phone = await newPhone(chromium.browser)
      try {
        await phone.page.goto(byNumber)
        await phone.page.locator('[data-card]').first().waitFor({ timeout: 30_000 })
        await openTab(phone.page, 'speakers')
        const owner = phone.page.locator('[data-owner]')
        await owner.waitFor()
        expect(await owner.getAttribute('data-owner')).toBe('unavailable')
        const origin = new URL(link).origin
        expect(await shownText(owner)).toContain(
          `never by a number address such as 127.0.0.1. Open the app at ${origin} instead`,
        )
        expect(await phone.page.locator('[data-owner-register]').count()).toBe(0)
      } finally {
        await phone.context.close()
      }
    })
  },
)
