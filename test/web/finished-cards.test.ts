import { describe, expect, it } from 'vitest'
import { missingCommands } from '../helpers/system.js'
import { missingChromium } from './browser.js'
import { ask } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()

/** Issue 44, item 6: finished cards on Approvals do not pile up. */
describe.skipIf(skip !== undefined)('finished cards on Approvals', { timeout: 90_000 }, () => {
  const suite = webSuite()

  it('a finished card leaves a minute after it ended, not after its request would have expired; Clear takes the finished ones at once', async () => {
    const w = await suite.world()
    const anna = await suite.phone('anna', w)
    // Requests that could wait ten minutes: their cards must not stay that long once answered.
    const lamp = ask(w, { action: 'switch on the hall light', expiresInMs: 600_000 })
    const porch = ask(w, {
      action: 'switch on the porch light',
      args: { room: 'porch' },
      expiresInMs: 600_000,
    })
    const kettle = ask(w, {
      action: 'switch on the kettle',
      args: { room: 'kitchen' },
      expiresInMs: 600_000,
    })
    await suite.card(anna, porch.id).getByRole('button', { name: /^Deny/ }).click()
    await anna.page.locator(`[data-card="${porch.id}"][data-state="denied"]`).waitFor()
    const clear = anna.page.locator('[data-clear-finished]')
    expect(await clear.textContent()).toBe('Clear the finished request')
    await clear.click()
    await suite.card(anna, porch.id).waitFor({ state: 'detached' })
    // Only the finished one: the waiting requests stay, and nothing is left to clear.
    expect(await suite.card(anna, kettle.id).getAttribute('data-state')).toBe('pending')
    expect(await clear.count()).toBe(0)

    // Last, as the phone's clock moves on: a decision made after it would be refused as too late.
    await suite
      .card(anna, lamp.id)
      .getByRole('button', { name: /^Approve/ })
      .click()
    await anna.page.locator(`[data-card="${lamp.id}"][data-state="approved"]`).waitFor()
    // The phone's clock a minute and a bit later; its timers go on as before.
    await anna.page.clock.setFixedTime(Date.now() + 61_000)
    await suite.card(anna, lamp.id).waitFor({ state: 'detached', timeout: 5000 })
    expect(await suite.card(anna, kettle.id).getAttribute('data-state')).toBe('pending')
  })
})
