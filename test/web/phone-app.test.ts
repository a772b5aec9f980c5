import { describe, expect, it } from 'vitest'
import { silentLogger } from '../../src/core/logger.js'
import type { CallContext, Tool } from '../../src/core/types.js'
import { requestDigest, signRequest } from '../../src/protocol/index.js'
import { USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { tick, until } from '../helpers/wait.js'
import { lightTool, type PhoneWorld } from '../phone/world.js'
import { openTab, type PhonePage } from './app-harness.js'
import { missingChromium } from './browser.js'
import { ask, recordBroker, storedExchange } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()

describe.skipIf(skip !== undefined)('the phone app in Chromium', { timeout: 90_000 }, () => {
  const suite = webSuite()
  const world = () => suite.world()
  const phone = (name: 'anna' | 'ben', w: PhoneWorld, into?: PhonePage) =>
    suite.phone(name, w, into)
  const card = (p: PhonePage, id: string) => suite.card(p, id)

  it('pairs through the fragment (then wipes it), shows a spoken request verified, and an approval runs the tool', async () => {
    const w = await world()
    const seen = await recordBroker(w)
    const anna = await phone('anna', w)
    expect(new URL(anna.page.url()).hash).toBe('')
    expect(await anna.page.evaluate('localStorage.length')).toBe(1)
    await w.speak(async (conn) => {
      conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
      const c = anna.page.locator('[data-card]')
      await c.waitFor()
      expect(await c.locator('.action').textContent()).toBe('Unlock the front door')
      const text = await c.textContent()
      expect(text).toContain('asked by voice in the room')
      expect(text).toContain('unlock_door')
      expect(text).toContain('door: front')
      expect(text).toContain('Asks every time')
      // A critical tool: only "once" is offered.
      expect(await c.locator('input[type=radio]').count()).toBe(1)
      await c.getByRole('button', { name: 'Approve: unlock the front door' }).click()
      await until(() => w.unlocked.length === 1, 'the door to be unlocked')
      await c
        .locator('[data-state="approved"]')
        .or(c.and(anna.page.locator('[data-state="approved"]')))
        .first()
        .waitFor()
    })
    expect(w.unlocked).toEqual(['front'])
    const decisions = seen.json('/decision')
    expect(decisions).toEqual([
      expect.objectContaining({ decision: 'approve', grant: 'once', phone: 'anna' }),
    ])
    expect(seen.json('/outcome')).toContainEqual(
      expect.objectContaining({ state: 'approved', by: 'anna' }),
    )
  })

  it('a deny reaches the device as a deny, and the card says so with nothing left to press', async () => {
    const w = await world()
    const seen = await recordBroker(w)
    const anna = await phone('anna', w)
    const q = ask(w, { action: 'switch on the hall light' })
    await card(anna, q.id).getByRole('button', { name: /^Deny/ }).click()
    await expect(q.decision).resolves.toMatchObject({ decision: 'deny', by: 'anna' })
    await card(anna, q.id).and(anna.page.locator('[data-state="denied"]')).waitFor()
    expect(await card(anna, q.id).textContent()).toContain('You denied this.')
    // Ended: nothing is left to press (issue 23, finding 5).
    expect(await card(anna, q.id).getByRole('button').count()).toBe(0)
    expect(seen.json('/decision')).toEqual([
      expect.objectContaining({ id: q.id, decision: 'deny', phone: 'anna' }),
    ])
  })

  it('a call withdrawn by the model closes its card at once; the tool never runs', async () => {
    const w = await world()
    const seen = await recordBroker(w)
    const anna = await phone('anna', w)
    await w.speak(async (conn) => {
      conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'back' } })
      const c = anna.page.locator('[data-card]')
      await c.waitFor()
      expect(await c.getAttribute('data-state')).toBe('pending')
      conn.cancel('c1')
      await anna.page.locator('[data-card][data-state="withdrawn"]').waitFor()
      expect(await c.getByRole('button').count()).toBe(0)
    })
    expect(w.unlocked).toEqual([])
    expect(seen.json('/outcome')).toContainEqual(expect.objectContaining({ state: 'withdrawn' }))
    expect(seen.json('/decision')).toEqual([])
  })

  it("two phones: ben approves, and the card on anna's phone closes at once saying who", async () => {
    const w = await world()
    const seen = await recordBroker(w)
    const anna = await phone('anna', w)
    const ben = await phone('ben', w)
    const q = ask(w, { action: 'switch on the hall light' })
    await card(anna, q.id).waitFor()
    await card(ben, q.id)
      .getByRole('button', { name: /^Approve/ })
      .click()
    await expect(q.decision).resolves.toMatchObject({ decision: 'approve', by: 'ben' })
    await anna.page.locator(`[data-card="${q.id}"][data-state="approved"]`).waitFor()
    expect(await card(anna, q.id).textContent()).toContain("Approved on Ben's phone.")
    // Ended: nothing is left to press (issue 23, finding 5).
    expect(await card(anna, q.id).getByRole('button').count()).toBe(0)
    expect(seen.json('/decision').map((d) => d.phone)).toEqual(['ben'])
  })

  it('a grant is listed and revoked from the app after a confirm (cancelled, it stays); the next call asks again', async () => {
    const w = await world()
    const seen = await recordBroker(w)
    const anna = await phone('anna', w)
    const ctx: CallContext = {
      signal: new AbortController().signal,
      channel: 'voice',
      conversationId: 'conv-grants',
      callId: 'g1',
      gate: w.gate,
      logger: silentLogger,
      onPending: () => {},
    }
    const first = w.gate.check(lightTool([]) as Tool, { room: 'hall' }, ctx)
    await until(() => w.asked.length === 1, 'the gate to ask')
    const c = card(anna, w.asked[0]?.id ?? '')
    await c.getByLabel('For this conversation').check()
    await c.getByRole('button', { name: /^Approve/ }).click()
    await first
    expect(w.grants.list()).toHaveLength(1)
    await openTab(anna.page, 'grants')
    const item = anna.page.locator('[data-grant]')
    await item.waitFor()
    // Issue 44, item 3: in the words of the card, not the tool's name.
    const said =
      'Switch on the hall lightroom: hallWhen said in the room, for one conversation. You said yes.'
    expect(await item.textContent()).toContain(said)
    expect(await item.textContent()).not.toContain('set_light')
    // A phone that never saw the card (reopened) learns the sentence from the History.
    await anna.page.reload()
    await anna.page.locator('[data-health="connected"]').waitFor()
    await openTab(anna.page, 'grants')
    await anna.page.locator('[data-grant]', { hasText: said }).waitFor()
    // Covered by the grant: no question.
    await w.gate.check(lightTool([]) as Tool, { room: 'hall' }, ctx)
    expect(w.asked).toHaveLength(1)
    // Revoke asks first (issue 23, finding 11): cancelled, the grant stays on the device.
    const dialogs: string[] = []
    anna.page.once('dialog', (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    await item.getByRole('button', { name: /^Revoke/ }).click()
    await until(() => dialogs.length === 1, 'the confirm')
    expect(dialogs[0]).toContain('"Switch on the hall light", for one conversation')
    await tick(500)
    const inForce = () => w.grants.list().filter((g) => g.revokedAt === null)
    expect(inForce()).toHaveLength(1)
    expect(seen.json('/conversations/request/anna').map((r) => r.op)).not.toContain('revoke')
    expect(await anna.page.locator('[data-grant]').count()).toBe(1)
    anna.page.once('dialog', (d) => void d.accept())
    await item.getByRole('button', { name: /^Revoke/ }).click()
    await anna.page.locator('[data-grant]').waitFor({ state: 'detached' })
    expect(inForce()).toHaveLength(0)
    expect(seen.json('/conversations/request/anna').map((r) => r.op)).toContain('revoke')
    expect(w.logger.entries).toContainEqual(
      expect.objectContaining({
        fields: expect.objectContaining({ event: 'grant_revoked', phone: 'anna' }),
      }),
    )
    const again = w.gate.check(lightTool([]) as Tool, { room: 'hall' }, ctx)
    again.catch(() => {})
    await until(() => w.asked.length === 2, 'the gate to ask again')
    await openTab(anna.page, 'approvals')
    await card(anna, w.asked[1]?.id ?? '')
      .getByRole('button', { name: /^Deny/ })
      .click()
    await expect(again).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
  })

  it('a request nobody answers counts down and ends as expired, nothing left to press', async () => {
    const w = await world()
    const seen = await recordBroker(w)
    const anna = await phone('anna', w)
    const q = ask(w, { expiresInMs: 2500 })
    await card(anna, q.id).waitFor()
    expect(await card(anna, q.id).locator('[data-expires]').textContent()).toMatch(/^[1-3] s$/)
    await expect(q.decision).rejects.toMatchObject({ code: 'NOC_ERR_APPROVAL_TIMEOUT' })
    await anna.page.locator(`[data-card="${q.id}"][data-state="expired"]`).waitFor()
    // Ended: nothing is left to press (issue 23, finding 5).
    expect(await card(anna, q.id).getByRole('button').count()).toBe(0)
    await until(() => seen.json('/outcome').length === 1, 'the expired outcome')
    expect(seen.json('/outcome')[0]).toMatchObject({ id: q.id, state: 'expired' })
  })

  it('forged requests (bad MAC, changed arguments, another device) never appear; diagnostics counts them', async () => {
    const w = await world()
    const anna = await phone('anna', w)
    const intruder = await w.raw(USERS.intruder)
    const key = w.keys.get('anna') ?? Buffer.alloc(32)
    const now = Date.now()
    const body = (id: string, device = w.deviceId) => ({
      v: 1,
      id,
      device,
      tool: 'unlock_door',
      action: 'unlock the front door',
      args: { door: 'front' },
      critical: true,
      channel: 'voice',
      conversation: 'conv-x',
      createdAt: now,
      expiresAt: now + 60_000,
    })
    const signedFor = (b: ReturnType<typeof body>) => {
      const digest = requestDigest(b)
      return { ...b, digest, macs: { anna: signRequest(key, digest) } }
    }
    // 1. a MAC made with another key
    const bad = body('forged-mac')
    const badDigest = requestDigest(bad)
    const forged = {
      ...bad,
      digest: badDigest,
      macs: { anna: signRequest(Buffer.alloc(32, 7), badDigest) },
    }
    // 2. a genuine signature, then the arguments changed
    const changed = { ...signedFor(body('forged-args')), args: { door: 'back' } }
    // 3. signed with anna's key, for another device, planted on this device's topic
    const other = signedFor(body('forged-device', 'garage'))
    for (const m of [forged, changed, other]) {
      await intruder.publishAsync(w.topics.request(m.id), JSON.stringify(m), {
        qos: 1,
        retain: true,
      })
    }
    await intruder.publishAsync(w.topics.request('junk'), 'not json', { qos: 1 })
    // A genuine request after them: once it shows, the forged ones had their chance.
    const q = ask(w)
    await card(anna, q.id).waitFor()
    expect(await anna.page.locator('[data-card]').count()).toBe(1)
    await openTab(anna.page, 'speakers')
    const diag = anna.page.locator('.diagnostics')
    await diag.locator('[data-reason="bad-mac"]').waitFor()
    expect(
      await diag.locator('[data-reason="bad-mac"] [data-count]').getAttribute('data-count'),
    ).toBe('1')
    expect(
      await diag.locator('[data-reason="digest-mismatch"] [data-count]').getAttribute('data-count'),
    ).toBe('1')
    expect(
      await diag.locator('[data-reason="wrong-device"] [data-count]').getAttribute('data-count'),
    ).toBe('1')
    expect(
      await diag.locator('[data-reason="malformed-json"] [data-count]').getAttribute('data-count'),
    ).toBe('1')
    expect(w.deviceState.snapshot.refused.decisions).toEqual({})
  })

  it('a new request re-renders the list, and the focus stays on the button a person was on', async () => {
    const w = await suite.world()
    const anna = await suite.phone('anna', w)
    const first = ask(w, { action: 'switch on the hall light' })
    const approve = card(anna, first.id).getByRole('button', { name: /^Approve/ })
    await approve.focus()
    const second = ask(w, { action: 'switch on the porch light', args: { room: 'porch' } })
    await card(anna, second.id).waitFor()
    const focused = (await anna.page.evaluate(
      `[document.activeElement?.closest('[data-card]')?.dataset.card, document.activeElement?.textContent]`,
    )) as [string | undefined, string | undefined]
    expect(focused[0]).toBe(first.id)
    expect(focused[1]).toMatch(/^Approve/)
    // And the focused button still answers its own request.
    await anna.page.keyboard.press('Enter')
    await expect(first.decision).resolves.toMatchObject({ decision: 'approve' })
    await card(anna, second.id).getByRole('button', { name: /^Deny/ }).click()
    await expect(second.decision).resolves.toMatchObject({ decision: 'deny' })
  })

  it('a conversation is read, and continued by typing: the answer streams in and is stored', async () => {
    const w = await world()
    const c = { id: storedExchange(w, 'What time is it?', 'It is noon.') }
    const anna = await phone('anna', w)
    await openTab(anna.page, 'chats')
    await anna.page.locator(`[data-conversation="${c.id}"]`).click()
    await anna.page.locator('.msg.assistant', { hasText: 'It is noon.' }).waitFor()
    expect(await anna.page.locator('.msg.user').first().textContent()).toContain('What time is it?')
    w.server.queueGenerate({ text: 'The kettle is by the window.' })
    await anna.page.getByLabel('Message to the speaker').fill('Where is the kettle?')
    await anna.page.getByRole('button', { name: 'Send' }).click()
    await anna.page
      .locator('.msg.assistant[data-seq]', { hasText: 'The kettle is by the window.' })
      .waitFor()
    const stored = w.feed.messages(c.id).map((m) => [m.role, m.channel, 'text' in m ? m.text : ''])
    expect(stored.slice(2)).toEqual([
      ['user', 'text', 'Where is the kettle?'],
      ['assistant', 'text', 'The kettle is by the window.'],
    ])
  })

  it('the broker restarts: the app reconnects by itself and shows what is still pending', async () => {
    const w = await world()
    const anna = await phone('anna', w)
    const q = ask(w)
    await card(anna, q.id).waitFor()
    await suite.broker.kill()
    await openTab(anna.page, 'speakers')
    await anna.page.locator('[data-status]', { hasText: 'Connecting' }).waitFor()
    await suite.broker.start()
    await anna.page.locator('[data-status]', { hasText: 'Online' }).waitFor({ timeout: 15_000 })
    await openTab(anna.page, 'approvals')
    await card(anna, q.id)
      .getByRole('button', { name: /^Approve/ })
      .click()
    await expect(q.decision).resolves.toMatchObject({ decision: 'approve', by: 'anna' })
  })

  it('two speakers paired in one app: each shown by name with its own requests and key', async () => {
    const kitchen = await world()
    const bedroom = await world()
    const anna = await phone('anna', kitchen)
    await phone('anna', bedroom, anna)
    await openTab(anna.page, 'speakers')
    expect(await anna.page.locator('[data-speaker]').count()).toBe(2)
    await openTab(anna.page, 'approvals')
    const a = ask(kitchen, { action: 'switch on the kitchen light' })
    const b = ask(bedroom, { action: 'switch on the bedroom light' })
    await card(anna, a.id).waitFor()
    await card(anna, b.id).waitFor()
    expect(await card(anna, a.id).locator('.speaker-name').textContent()).toContain(
      kitchen.deviceId,
    )
    expect(await card(anna, b.id).locator('.speaker-name').textContent()).toContain(
      bedroom.deviceId,
    )
    await card(anna, b.id)
      .getByRole('button', { name: /^Approve/ })
      .click()
    await card(anna, a.id).getByRole('button', { name: /^Deny/ }).click()
    await expect(b.decision).resolves.toMatchObject({ decision: 'approve', by: 'anna' })
    await expect(a.decision).resolves.toMatchObject({ decision: 'deny', by: 'anna' })
  })

  it('bad input gets a plain sentence, and what is paired stays paired', {
    timeout: 60_000,
  }, async () => {
    const w = await world()
    const anna = await phone('anna', w)
    // A link cut short.
    await anna.page.goto(
      `${suite.appUrl}#pair=${encodeURIComponent('nocturn-pair:v1?broker=mqtt%3A%2F%2Fx&device=kitchen&phone=anna&key=abc')}`,
    )
    await anna.page.locator('#notice [role="alert"]', { hasText: 'key is not 256 bits' }).waitFor()
    await anna.page
      .locator(`[data-speaker="${w.deviceId}"] [data-status]`, { hasText: 'Online' })
      .waitFor()
    // A wrong broker password.
    const ben = await suite.blank()
    await ben.page.goto(suite.link(w, 'ben'))
    await ben.page.locator('[data-health="needs-login"]').waitFor()
    await openTab(ben.page, 'speakers')
    const benCard = ben.page.locator(`[data-speaker="${w.deviceId}"]`)
    await benCard.getByLabel(/Password for this phone on/).fill('not-the-password')
    await benCard.getByRole('button', { name: 'Connect' }).click()
    await benCard
      .locator('[role="alert"]', { hasText: 'refused the user name or password' })
      .waitFor()
    // A device that never answers: its endpoint is gone, the broker is fine.
    w.endpoint.close()
    await openTab(anna.page, 'chats')
    await anna.page
      .locator('[role="alert"]', { hasText: 'did not answer within 10 s' })
      .waitFor({ timeout: 15_000 })
    expect(await anna.page.evaluate("localStorage.getItem('nocturn.speakers.v1')")).toContain(
      w.deviceId,
    )
  })
})
