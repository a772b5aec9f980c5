import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import { pairingUri } from '../../src/protocol/index.js'
import { USERS } from '../helpers/brokers.js'
import type { PhoneWorld } from '../phone/world.js'

export type PhoneName = 'anna' | 'ben'

/** A link to the app with the pairing in the fragment, as `nocturn pair` prints it. */
export function pairLink(
  appUrl: string,
  w: PhoneWorld,
  phone: PhoneName,
  brokerUrl: string,
): string {
  const uri = pairingUri({
    broker: brokerUrl,
    device: w.deviceId,
    prefix: 'nocturn/v1',
    phone,
    key: w.keys.get(phone) ?? Buffer.alloc(32),
  })
  return `${appUrl}#pair=${encodeURIComponent(uri)}`
}

export interface PhonePage {
  readonly context: BrowserContext
  readonly page: Page
  readonly errors: string[]
}

/** A phone-sized page in its own context (its own storage): a separate phone. */
export async function newPhone(
  browser: Browser,
  options: { colorScheme?: 'light' | 'dark' } = {},
): Promise<PhonePage> {
  const context = await browser.newContext({
    viewport: { width: 360, height: 740 },
    colorScheme: options.colorScheme ?? 'light',
  })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  return { context, page, errors }
}

/**
 * Opens the pairing link; once the broker has refused the phone without a password (the test
 * broker wants one), enters it under Speakers and waits for the speaker online.
 */
export async function pairAndConnect(
  phone: PhonePage,
  link: string,
  name: PhoneName,
  device: string,
): Promise<void> {
  const { page } = phone
  await page.goto(link)
  await page.waitForSelector('body[data-ready="true"]')
  await page.locator(`[data-speaker-health="${device}"][data-health="needs-login"]`).waitFor()
  await openTab(page, 'speakers')
  const card = page.locator(`[data-speaker="${device}"]`)
  await card.getByLabel(/Password for this phone on/).fill(USERS[name].password)
  await card.getByRole('button', { name: 'Connect' }).click()
  await page
    .locator(`[data-speaker="${device}"] [data-status]`)
    .filter({ hasText: 'Online' })
    .waitFor()
}

export async function openTab(
  page: Page,
  tab: 'approvals' | 'chats' | 'grants' | 'speakers' | 'history',
) {
  await page.locator(`nav [data-tab="${tab}"]`).click()
}

/** What a person sees of an element: its rendered text (a closed `<details>` hides its body). */
export function shownText(l: Locator): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point here
  return l.innerText()
}
