import { describe, expect, it } from 'vitest'
import { ProviderHealthListener } from '../../src/device/provider-health.js'
import { requestDigest, signRequest } from '../../src/protocol/index.js'
import { phoneRequestMessage } from '../../src/protocol/phone-side.js'
import { USERS } from '../helpers/brokers.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import type { PhoneWorld } from '../phone/world.js'
import { openTab, shownText } from './app-harness.js'
import { missingChromium } from './browser.js'
import { ask, doorRequestBody, recordBroker, storedExchange } from './device-side.js'
import { webSuite } from './suite.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd') ?? missingChromium()

/** Issue 23: the app as a household member meets it, finding by finding. */
describe.skipIf(skip !== undefined)(
  'the phone app, as a household meets it',
  {
    timeout: 90_000,
  },
  () => {
    const suite = webSuite()

    it('1, 4: a refused password or no password yet is "not connected", never "nothing to approve", on every screen — while a request waits on the broker', async () => {
      const w = await suite.world()
      const seen = await recordBroker(w)
      const q = ask(w, { action: 'unlock the front door', tool: 'unlock_door' })
      await until(() => seen.json(`/approvals/${q.id}`).length === 1, 'the request on the broker')
      // Paired, but the password not entered yet (the app reopened before it was typed).
      const ben = await suite.blank()
      await ben.page.goto(suite.link(w, 'ben'))
      await ben.page.waitForSelector('body[data-ready="true"]')
      await ben.page.reload()
      await ben.page.waitForSelector('body[data-ready="true"]')
      await openTab(ben.page, 'approvals')
      const empty = ben.page.locator('#view .empty')
      expect(await empty.textContent()).toMatch(
        /^Not connected to dev-[^,]+, so this phone cannot see/,
      )
      expect(await ben.page.locator('#view').textContent()).not.toContain('Nothing to approve')
      // Issue 44: the password is asked for once the broker refused the phone without one.
      await ben.page.locator('[data-health="needs-login"]').waitFor()
      expect(await ben.page.locator('[data-health="needs-login"]').textContent()).toContain(
        "not connected — the broker asks for this phone's password",
      )
      // A wrong password: refused, said on every screen, and no "Connecting…" left beside it.
      await openTab(ben.page, 'speakers')
      const speaker = ben.page.locator(`[data-speaker="${w.deviceId}"]`)
      await speaker.getByLabel(/Password for this phone on/).fill('not-the-password')
      await speaker.getByRole('button', { name: 'Connect' }).click()
      await ben.page.locator('[data-health="refused"]').waitFor()
      for (const tab of ['approvals', 'chats', 'grants', 'speakers'] as const) {
        await openTab(ben.page, tab)
        expect(await ben.page.locator('#health').textContent()).toContain(
          "not connected — the broker refused this phone's password",
        )
        expect(await ben.page.locator('#notice').textContent()).not.toContain('Connecting')
      }
      await openTab(ben.page, 'approvals')
      expect(await ben.page.locator('#view').textContent()).not.toContain('Nothing to approve')
      // The right password: the waiting request shows, and the health line says connected.
      await openTab(ben.page, 'speakers')
      await speaker.getByLabel(/Password for this phone on/).fill(USERS.ben.password)
      await speaker.getByRole('button', { name: 'Connect' }).click()
      await ben.page.locator('[data-health="connected"]').waitFor()
      await openTab(ben.page, 'approvals')
      await suite.card(ben, q.id).waitFor()
      // Finding 4: nothing says "Connecting" once connected.
      expect(await ben.page.locator('body').textContent()).not.toContain('Connecting')
    })

    it('2: the broker goes away — every screen says so, an answer is held and says so, then goes out on reconnect and the card says what came of it', async () => {
      const w = await suite.world()
      const anna = await suite.phone('anna', w)
      const q = ask(w, { action: 'switch on the hall light' })
      await suite.card(anna, q.id).waitFor()
      let decided = false
      void q.decision.then(() => {
        decided = true
      })
      await suite.broker.kill()
      await anna.page.locator('[data-health="reconnecting"]').waitFor({ timeout: 15_000 })
      expect(await anna.page.locator('#health').textContent()).toContain(
        'An answer you give now goes out when the phone reconnects.',
      )
      await suite.card(anna, q.id).getByLabel('For one hour').check()
      await suite
        .card(anna, q.id)
        .getByRole('button', { name: /^Approve/ })
        .click()
      const queued = suite.card(anna, q.id).locator('[data-delivery="queued"]')
      await queued.waitFor()
      expect(await queued.textContent()).toContain('Not sent yet: this phone is not connected')
      expect(await suite.card(anna, q.id).textContent()).not.toContain('was sent')
      expect(decided).toBe(false)
      await suite.broker.start()
      await expect(q.decision).resolves.toMatchObject({ decision: 'approve', by: 'anna' })
      // The held answer went out only after the phone subscribed again: outcomes are not retained,
      // so an answer sent first could end the request while the phone was not listening.
      // Mosquitto's log reaches this process through a pipe, the decision through a socket: the
      // line may come a moment after the device already has the decision.
      const decisionLine = new RegExp(
        `Received PUBLISH from (\\S+) \\(.*approvals/${q.id}/decision`,
      )
      await until(
        () => decisionLine.test(suite.broker.log?.() ?? ''),
        'the broker to log the held decision',
      )
      const log = suite.broker.log?.() ?? ''
      const sent = log.match(decisionLine)
      const subscribed = log.indexOf(`Received SUBSCRIBE from ${sent?.[1]}`)
      expect(subscribed).toBeGreaterThanOrEqual(0)
      expect(subscribed).toBeLessThan(sent?.index ?? -1)
      const ended = anna.page.locator(`[data-card="${q.id}"][data-state="approved"]`)
      await ended.waitFor({ timeout: 15_000 })
      // Finding 5: one's own tap in one's own words, what was remembered, nothing left to press.
      const text = await ended.textContent()
      expect(text).toContain('You approved this.')
      expect(text).toMatch(/Remembered until (tomorrow )?\d{1,2}:\d\d/) // tomorrow: past 23:00
      expect(await ended.getByRole('button').count()).toBe(0)
      expect(await ended.locator('fieldset').count()).toBe(0)
    })

    it('2: an answer held offline past the deadline: the card says it never reached the speaker, and the device granted nothing', async () => {
      const w = await suite.world()
      const anna = await suite.phone('anna', w)
      const q = ask(w, { action: 'switch on the hall light', expiresInMs: 4000 })
      await suite.card(anna, q.id).waitFor()
      await suite.broker.kill()
      await anna.page.locator('[data-health="reconnecting"]').waitFor({ timeout: 15_000 })
      await suite
        .card(anna, q.id)
        .getByRole('button', { name: /^Approve/ })
        .click()
      await suite.card(anna, q.id).locator('[data-delivery="queued"]').waitFor()
      await expect(q.decision).rejects.toMatchObject({ code: 'NOC_ERR_APPROVAL_TIMEOUT' })
      const ended = anna.page.locator(`[data-card="${q.id}"][data-state="expired"]`)
      await ended.waitFor()
      expect(await ended.textContent()).toContain('never reached dev-')
      await suite.broker.start()
      await anna.page.locator('[data-health="connected"]').waitFor({ timeout: 15_000 })
      // The held decision went out on reconnect and was refused: the request had ended.
      await until(() => w.refusedDecisions('expired') === 1, 'the late decision refused')
      expect(w.grants.list()).toEqual([])
    })

    it('5: approved and denied look different (mark, words, colour); a deny on another phone says whose', async () => {
      const w = await suite.world()
      const anna = await suite.phone('anna', w)
      const ben = await suite.phone('ben', w)
      const yes = ask(w, { action: 'switch on the hall light' })
      const no = ask(w, { action: 'switch on the porch light', args: { room: 'porch' } })
      await suite.card(anna, yes.id).waitFor()
      await suite.card(ben, no.id).getByRole('button', { name: /^Deny/ }).click()
      await suite
        .card(anna, yes.id)
        .getByRole('button', { name: /^Approve/ })
        .click()
      await Promise.all([yes.decision, no.decision])
      const approved = anna.page.locator(`[data-card="${yes.id}"] .ending.approved`)
      const denied = anna.page.locator(`[data-card="${no.id}"] .ending.denied`)
      await approved.waitFor()
      await denied.waitFor()
      expect(await approved.locator('.mark').textContent()).toBe('✓')
      expect(await denied.locator('.mark').textContent()).toBe('✕')
      expect(await approved.textContent()).toContain('Just this once: it asks again next time.')
      expect(await denied.textContent()).toContain("Denied on Ben's phone.")
      const bg = (sel: string) =>
        anna.page.evaluate(
          `getComputedStyle(document.querySelector(${JSON.stringify(sel)})).backgroundColor`,
        )
      expect(await bg(`[data-card="${yes.id}"] .ending`)).not.toBe(
        await bg(`[data-card="${no.id}"] .ending`),
      )
    })

    it('6: plain words — Diagnostics in sentences with the code one tap away, the password in household words, pairing explained, no phone id as a name', async () => {
      const w = await suite.world()
      const anna = await suite.phone('anna', w)
      const intruder = await w.raw(USERS.intruder)
      const body = doorRequestBody(w, 'forged-key')
      const digest = requestDigest(body)
      const forged = { ...body, digest, macs: { anna: signRequest(Buffer.alloc(32, 9), digest) } }
      await intruder.publishAsync(w.topics.request(forged.id), JSON.stringify(forged), { qos: 1 })
      await intruder.publishAsync(w.topics.request('junk'), 'not json', { qos: 1 })
      await intruder.publishAsync(w.topics.request('junk2'), 'not json either', { qos: 1 })
      await openTab(anna.page, 'speakers')
      const diag = anna.page.locator('.diagnostics')
      const badMac = diag.locator('[data-reason="bad-mac"]')
      await badMac.waitFor()
      await diag.locator('[data-reason="malformed-json"] [data-count="2"]').waitFor()
      expect(await shownText(badMac)).toMatch(
        /^A message was not signed with this phone’s key: someone else wrote it\. Once\./,
      )
      expect(await shownText(diag.locator('[data-reason="malformed-json"] p'))).toBe(
        'A message was garbled: not something the speaker sends. 2 times.',
      )
      // The code is one tap away, not on the page until then.
      expect(await shownText(diag)).not.toContain('bad-mac')
      await badMac.getByText('Reason code').click()
      expect(await shownText(badMac.locator('code'))).toBe('bad-mac')
      // The speaker's card: household words, and the phone's id only under Technical details.
      const speaker = anna.page.locator(`[data-speaker="${w.deviceId}"]`)
      const shown = await shownText(speaker)
      expect(shown).not.toMatch(/broker login|broker user/i)
      expect(shown).toContain("This phone's password")
      expect(shown).toContain('Nothing waiting for an answer.')
      expect(shown).not.toMatch(/\banna\b/)
      // The card can be drawn again as a status arrives, its details closed again: tap until shown.
      const tech = speaker.locator('details.details').last()
      await expect
        .poll(async () => {
          if (!(await tech.evaluate((d) => d.hasAttribute('open'))))
            await tech.getByText('Technical details').click()
          return shownText(tech)
        })
        .toContain('anna')
      // Pairing is explained, with an example, instead of "run nocturn pair <phone> <name>".
      const hint = await shownText(anna.page.locator('form.pair .hint'))
      expect(hint).not.toContain('<phone>')
      expect(hint).toContain('Ask whoever looks after the speaker to pair this phone.')
      expect(hint).toContain('nocturn pair ben "Ben\'s phone"')
      expect(await shownText(anna.page.locator('#notice'))).not.toMatch(/\bas anna\b/)
    })

    it('7: the card shows what was said in the room and what Ben typed, signed with the request', async () => {
      const w = await suite.world()
      const seen = await recordBroker(w)
      const anna = await suite.phone('anna', w)
      // Spoken: the model's transcription of the room, then the call.
      await w.speak(async (conn) => {
        conn.user('The plumber is at the front door, ')
        conn.user('let him in please.')
        conn.toolCall({ id: 'c1', name: 'unlock_door', args: { door: 'front' } })
        const c = anna.page.locator('[data-card]')
        await c.waitFor()
        expect(await c.locator('.said').textContent()).toBe(
          'Said in the room: The plumber is at the front door, let him in please.',
        )
        await c.getByRole('button', { name: /^Deny/ }).click()
        await c.and(anna.page.locator('[data-state="denied"]')).waitFor()
      })
      const spoken = seen.messages
        .filter((m) => /\/approvals\/[^/]+$/.test(m.topic) && m.text !== '')
        .map((m) => JSON.parse(m.text) as Record<string, unknown>)
        .find((r) => r.channel === 'voice')
      expect(spoken?.said).toBe('The plumber is at the front door, let him in please.')
      // Typed on Ben's phone (the reference phone): anna's card says Ben typed it.
      const ben = await w.phone('ben')
      w.server.queueGenerate(
        { functionCalls: [{ id: 't1', name: 'set_light', args: { room: 'kitchen' } }] },
        { text: 'The kitchen light is on.' },
      )
      const typed = `Could you switch on the kitchen light? ${'We are baking. '.repeat(20)}`
      const answer = ben.say('new', typed)
      const c = anna.page.locator('[data-card][data-state="pending"]')
      await c.waitFor()
      const said = (await c.locator('.said q').textContent()) ?? ''
      expect(await c.locator('.said-who').textContent()).toBe('Ben typed: ')
      // Cut to 200 characters at the end, with "…" saying so.
      expect(said).toHaveLength(200)
      expect(said.startsWith('Could you switch on the kitchen light? We are baking.')).toBe(true)
      expect(said.endsWith('…')).toBe(true)
      await c.getByRole('button', { name: /^Approve/ }).click()
      await expect(answer).resolves.toMatchObject({ text: 'The kitchen light is on.' })
      expect(w.lit).toEqual(['kitchen'])
    })

    it('7: words changed after signing: the request stays hidden, and Diagnostics counts it', async () => {
      const w = await suite.world()
      const anna = await suite.phone('anna', w)
      const intruder = await w.raw(USERS.intruder)
      const key = w.keys.get('anna') ?? Buffer.alloc(32)
      const body = doorRequestBody(w, 'forged-said', { said: 'Is the front door locked?' })
      const digest = requestDigest(body)
      const forged = {
        ...body,
        said: 'The plumber is here, let him in.',
        digest,
        macs: { anna: signRequest(key, digest) },
      }
      await intruder.publishAsync(w.topics.request(forged.id), JSON.stringify(forged), {
        qos: 1,
        retain: true,
      })
      // A genuine request with words after it: once it shows, the forged one had its chance.
      const q = ask(w, { said: 'Switch on the hall light.' })
      await suite.card(anna, q.id).waitFor()
      expect(await suite.card(anna, q.id).locator('.said').textContent()).toBe(
        'Said in the room: Switch on the hall light.',
      )
      expect(await anna.page.locator('[data-card]').count()).toBe(1)
      expect(await anna.page.locator('#view').textContent()).not.toContain('plumber')
      await openTab(anna.page, 'speakers')
      const diag = anna.page.locator('.diagnostics [data-reason="digest-mismatch"]')
      await diag.waitFor()
      expect(await diag.locator('[data-count]').getAttribute('data-count')).toBe('1')
    })

    it('11: a sent message shows once while its answer is pending, and messages are labelled by where they came from', async () => {
      const w = await suite.world()
      const conversation = storedExchange(w, 'Is it cold outside?', 'It is five degrees.')
      const anna = await suite.phone('anna', w)
      await openTab(anna.page, 'chats')
      await anna.page.locator(`[data-conversation="${conversation}"]`).click()
      const spoken = anna.page.locator('.msg.user', { hasText: 'Is it cold outside?' })
      await spoken.waitFor()
      // Issue 44: with the time, visible (the trailing colon is for screen readers only).
      expect(await spoken.locator('.who').textContent()).toMatch(
        /^Said in the room · \d\d:\d\d( [AP]M)?:$/,
      )
      // A gated call keeps the answer coming while the stored message is followed back.
      w.server.queueGenerate(
        { functionCalls: [{ id: 't1', name: 'set_light', args: { room: 'porch' } }] },
        { text: 'The porch light is on.' },
      )
      await anna.page.getByLabel('Message to the speaker').fill('Switch on the porch light')
      await anna.page.getByRole('button', { name: 'Send' }).click()
      await until(() => w.asked.length === 1, 'the gate to ask')
      const sent = anna.page.locator('.msg.user', { hasText: 'Switch on the porch light' })
      await anna.page.locator('p.sent', { hasText: 'Waiting for approval' }).waitFor()
      // Shown once, as this phone's own while it is being sent (the device keeps the stored copy
      // from this phone's follow while its own turn runs; the app drops its copy if it comes).
      expect(await sent.count()).toBe(1)
      expect(await sent.locator('.who').textContent()).toBe('You:')
      await openTab(anna.page, 'approvals')
      await suite
        .card(anna, w.asked[0]?.id ?? '')
        .getByRole('button', { name: /^Approve/ })
        .click()
      await openTab(anna.page, 'chats')
      await anna.page.locator('.msg.assistant', { hasText: 'The porch light is on.' }).waitFor()
      expect(await sent.count()).toBe(1)
      // Stored, it is labelled by where it came from and who typed it: this phone (issue 44).
      expect(await sent.locator('.who').textContent()).toMatch(
        /^Typed by you · \d\d:\d\d( [AP]M)?:$/,
      )
      // The action in the words its request used (issue 44), not the tool's name.
      expect(await anna.page.locator('.msg.tool').textContent()).toBe(
        'Switch on the porch light: done.',
      )
    })

    it('12: installable (a manifest with icons and the theme colour), a favicon, no 404 on load, and a refused "Allow notifications" says so', async () => {
      const w = await suite.world()
      const p = await suite.blank()
      const failed: string[] = []
      p.page.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`)
      })
      p.page.on('requestfailed', (r) => failed.push(`failed ${r.url()}`))
      await suite.phone('anna', w, p)
      await p.page.reload()
      await p.page.waitForSelector('body[data-ready="true"]')
      await p.page.locator('[data-health="connected"]').waitFor()
      expect(failed).toEqual([])
      // The favicon, also where a browser looks without being told.
      const ico = await p.page.request.get(new URL('favicon.ico', suite.appUrl).href)
      expect(ico.status()).toBe(200)
      expect(ico.headers()['content-type']).toBe('image/x-icon')
      const href = await p.page.locator('link[rel="manifest"]').getAttribute('href')
      const manifestUrl = new URL(href ?? '', suite.appUrl).href
      const res = await p.page.request.get(manifestUrl)
      expect(res.status()).toBe(200)
      expect(res.headers()['content-type']).toContain('application/manifest+json')
      const m = (await res.json()) as {
        name: string
        start_url: string
        display: string
        theme_color: string
        icons: Array<{ src: string; sizes: string; type: string; purpose?: string }>
      }
      expect(m).toMatchObject({ name: 'Nocturn', display: 'standalone', start_url: './' })
      expect(m.theme_color).toBe(
        await p.page.locator('meta[name="theme-color"]').getAttribute('content'),
      )
      // Each icon is there, of its type, and a PNG's size is what the manifest says.
      const sizes: string[] = []
      for (const icon of m.icons) {
        const got = await p.page.request.get(new URL(icon.src, manifestUrl).href)
        expect(got.status(), icon.src).toBe(200)
        expect(got.headers()['content-type']).toBe(icon.type)
        if (icon.type === 'image/png') {
          const b = await got.body()
          expect(b.subarray(1, 4).toString('ascii')).toBe('PNG')
          expect(`${b.readUInt32BE(16)}x${b.readUInt32BE(20)}`).toBe(icon.sizes)
          sizes.push(`${icon.sizes}${icon.purpose ? ` ${icon.purpose}` : ''}`)
        }
      }
      expect(sizes).toEqual(['192x192', '512x512', '512x512 maskable'])
      // Notifications refused (headless Chromium refuses every prompt): a sentence, not nothing.
      await p.page.getByRole('button', { name: 'Allow notifications' }).click()
      const said = p.page.locator('header .notifications')
      await said.waitFor()
      expect(await said.textContent()).toContain('Notifications are blocked for this app')
      expect(await p.page.getByRole('button', { name: 'Allow notifications' }).count()).toBe(0)
      // Still said after a reload: the browser remembers the refusal.
      await p.page.reload()
      await p.page.waitForSelector('body[data-ready="true"]')
      expect(await p.page.locator('header .notifications').textContent()).toContain(
        "allow notifications for this site in your browser's settings",
      )
    })

    it("volume (#25): the Speakers card shows the speaker's volume; the slider and the steps set it on the device; a forged set_volume changes nothing", async () => {
      const w = await suite.world()
      const seen = await recordBroker(w)
      const anna = await suite.phone('anna', w)
      await openTab(anna.page, 'speakers')
      const speaker = anna.page.locator(`[data-speaker="${w.deviceId}"]`)
      await speaker.locator('.volume[data-volume="100"]').waitFor()
      expect(await speaker.locator('.volume output').textContent()).toBe('100 %')
      await speaker.getByLabel(`Volume of ${w.deviceId}`).fill('40')
      await until(() => w.deviceState.volume === 40, 'the volume to reach the device')
      // Shown from the status the device published, not from what was asked.
      await speaker.locator('.volume[data-volume="40"]').waitFor()
      expect(seen.json('/status').at(-1)).toMatchObject({ online: true, volume: 40 })
      await speaker.getByRole('button', { name: `Quieter: ${w.deviceId}` }).click()
      await until(() => w.deviceState.volume === 30, 'a step quieter')
      await speaker.locator('.volume[data-volume="30"]').waitFor()
      const sent = seen.json('/conversations/request/anna').filter((r) => r.op === 'set_volume')
      expect(sent.map((r) => r.args)).toEqual([{ volume: 40 }, { volume: 30 }])
      await forgeSetting(w, 'set_volume', { volume: 100 }, sent)
      expect(w.deviceState.volume).toBe(30)
      expect(seen.json('/status').at(-1)).toMatchObject({ volume: 30 })
      expect(await speaker.locator('.volume').getAttribute('data-volume')).toBe('30')
    })

    it("wake sensitivity: the Speakers card shows the speaker's sensitivity; a choice sets it on the device and comes back in the status; a bad or forged set_sensitivity changes nothing", async () => {
      const w = await suite.world()
      const seen = await recordBroker(w)
      const anna = await suite.phone('anna', w)
      await openTab(anna.page, 'speakers')
      const speaker = anna.page.locator(`[data-speaker="${w.deviceId}"]`)
      await speaker.locator('.sensitivity[data-sensitivity="normal"]').waitFor()
      expect(await speaker.locator('.sensitivity input:checked').getAttribute('value')).toBe(
        'normal',
      )
      await speaker.getByLabel(`Wake sensitivity Low: ${w.deviceId}`).check()
      await until(() => w.deviceState.sensitivity === 'low', 'the sensitivity to reach the device')
      await speaker.locator('.sensitivity[data-sensitivity="low"]').waitFor()
      expect(seen.json('/status').at(-1)).toMatchObject({ online: true, sensitivity: 'low' })
      const sent = seen
        .json('/conversations/request/anna')
        .filter((r) => r.op === 'set_sensitivity')
      expect(sent.map((r) => r.args)).toEqual([{ sensitivity: 'low' }])
      // Signed by anna but not one of the three words: refused with the reason, nothing changes.
      const me = { device: w.deviceId, phone: 'anna', key: w.keys.get('anna') as Uint8Array }
      const topic = `${w.topics.base}/conversations/request/anna`
      const intruder = await w.raw(USERS.intruder)
      const odd = phoneRequestMessage(
        me,
        'odd-1',
        'set_sensitivity',
        { sensitivity: 'max' },
        Date.now(),
      )
      await intruder.publishAsync(topic, JSON.stringify(odd), { qos: 1 })
      await until(
        () =>
          seen
            .json('/conversations/reply/anna')
            .some((r) => r.re === 'odd-1' && JSON.stringify(r).includes('low, normal, high')),
        'the odd sensitivity refused with the words it takes',
      )
      await forgeSetting(w, 'set_sensitivity', { sensitivity: 'high' }, sent)
      expect(w.deviceState.sensitivity).toBe('low')
      expect(seen.json('/status').at(-1)).toMatchObject({ sensitivity: 'low' })
      expect(await speaker.locator('.sensitivity').getAttribute('data-sensitivity')).toBe('low')
    })

    it('the voice service: a provider that cannot be reached shows on the Speakers card in words, with the status saying which and why; the line goes when it is reached again', async () => {
      const w = await suite.world()
      const seen = await recordBroker(w)
      const anna = await suite.phone('anna', w)
      await openTab(anna.page, 'speakers')
      const speaker = anna.page.locator(`[data-speaker="${w.deviceId}"]`)
      await speaker.locator('[data-status]').waitFor()
      expect(await speaker.locator('[data-voice-service]').count()).toBe(0)
      // What the failover tells when no provider could be reached (ports/provider-listener.ts).
      const listener = new ProviderHealthListener(w.deviceState)
      listener.unreachable([
        { provider: 'gemini', reason: 'key_refused', detail: 'API key not valid' },
      ])
      const line = speaker.locator('[data-voice-service="key_refused"]')
      await line.waitFor()
      expect(await line.textContent()).toBe(
        'Voice service: Gemini refused the API key — check the key in the speaker’s settings. The speaker cannot answer until it is fixed.',
      )
      expect(seen.json('/status').at(-1)).toMatchObject({
        state: 'error',
        reason: 'no voice service can be reached (gemini key refused)',
        providers: [
          { provider: 'gemini', ok: false, reason: 'key_refused', detail: 'API key not valid' },
        ],
      })
      listener.reached('gemini')
      await speaker.locator('[data-voice-service]').waitFor({ state: 'detached' })
      // The provider's health and the cleared fault are two changes: the card can drop the line on
      // the first status, the fault goes with the next.
      await until(() => seen.json('/status').at(-1)?.state === 'idle', 'the fault cleared')
      const last = seen.json('/status').at(-1)
      expect(last).toMatchObject({ state: 'idle', providers: [{ provider: 'gemini', ok: true }] })
      expect(last).not.toHaveProperty('reason')
    })

    it("an alert's link (#card=…&device=…) opens Approvals at that request's card, and says so when the request is gone", async () => {
      const w = await suite.world()
      const anna = await suite.phone('anna', w)
      const asked = Array.from({ length: 6 }, (_, i) =>
        ask(w, { action: `switch on light number ${i + 1}`, tool: 'set_light' }),
      )
      const wanted = asked[4]?.id as string
      await suite.card(anna, wanted).waitFor()
      await openTab(anna.page, 'history')
      // What ntfy or Home Assistant would open (src/app/phone-app.ts builds the same link).
      await anna.page.goto(
        `${suite.appUrl.replace(/\/$/, '')}/#card=${wanted}&device=${w.deviceId}`,
      )
      // The card has the focus (in the page's own words: this file has no DOM types).
      await anna.page.waitForFunction(
        `document.activeElement?.getAttribute('data-card') === ${JSON.stringify(wanted)}`,
        undefined,
        { timeout: 15_000 },
      )
      expect(await anna.page.locator('nav [aria-current="page"]').textContent()).toContain(
        'Approvals',
      )
      // The fragment is wiped, as after a pairing: a reload does not jump again.
      expect(new URL(anna.page.url()).hash).toBe('')
      // A link to a request that has ended: said in a sentence, nothing else changes.
      await anna.page.goto(`${suite.appUrl.replace(/\/$/, '')}/#card=gone-1&device=${w.deviceId}`)
      await anna.page
        .locator('#notice', { hasText: 'is no longer waiting' })
        .waitFor({ timeout: 15_000 })
      expect(await suite.card(anna, wanted).count()).toBe(1)
    })

    it('13: a request asked outside any conversation (no `conversation` field) shows and is answered', async () => {
      const w = await suite.world()
      const seen = await recordBroker(w)
      const anna = await suite.phone('anna', w)
      const q = ask(w, { action: 'switch on the hall light', conversationId: '' })
      await suite.card(anna, q.id).waitFor()
      const sent = seen.json(`/approvals/${q.id}`)[0] ?? {}
      expect(Object.keys(sent)).not.toContain('conversation')
      await suite
        .card(anna, q.id)
        .getByRole('button', { name: /^Approve/ })
        .click()
      await expect(q.decision).resolves.toMatchObject({ decision: 'approve', by: 'anna' })
    })

    it('history: every ending is kept on the device and read from the phone over a signed request, grouped by day, after a reload too', async () => {
      const w = await suite.world()
      const seen = await recordBroker(w)
      const anna = await suite.phone('anna', w)
      const ben = await suite.phone('ben', w)
      const plumber = ask(w, {
        tool: 'unlock_door',
        action: 'unlock the front door',
        args: { door: 'front' },
        critical: true,
        said: 'The plumber is here, let him in.',
      })
      const porch = ask(w, { action: 'switch on the porch light', args: { room: 'porch' } })
      const late = ask(w, { action: 'switch on the hall light', expiresInMs: 2000 })
      await suite
        .card(ben, plumber.id)
        .getByRole('button', { name: /^Approve/ })
        .click()
      await suite.card(anna, porch.id).getByRole('button', { name: /^Deny/ }).click()
      await Promise.all([plumber.decision, porch.decision, late.decision.catch(() => {})])
      await until(() => w.store.history.list({ limit: 10 }).length === 3, 'three endings kept')
      // A reload: the cards are gone from memory, the history is on the device.
      await anna.page.reload()
      await anna.page.waitForSelector('body[data-ready="true"]')
      await anna.page.locator('[data-health="connected"]').waitFor()
      await openTab(anna.page, 'history')
      const today = anna.page.locator('section.day[aria-label="Today"]')
      await today.locator(`[data-ending="${late.id}"]`).waitFor()
      const item = (id: string) => today.locator(`[data-ending="${id}"]`).textContent()
      expect(await item(plumber.id)).toContain('Unlock the front door')
      expect(await item(plumber.id)).toContain("Approved on Ben's phone. It asks every time.")
      expect(await item(plumber.id)).toContain('door: front')
      // What was said is kept with the ending (docs/protocol.md, "What was said").
      expect(await item(plumber.id)).toContain('Said in the room: The plumber is here, let him in.')
      expect(w.store.history.list({ limit: 10 }).find((e) => e.id === plumber.id)?.said).toBe(
        'The plumber is here, let him in.',
      )
      expect(await item(porch.id)).toContain('You denied it.')
      expect(await item(late.id)).toContain('Expired: nobody answered in time.')
      // Newest first, as the device keeps them.
      const order = await today
        .locator('[data-ending]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-ending')))
      expect(order).toEqual(w.store.history.list({ limit: 10 }).map((e) => e.id))
      // What reached the broker: anna's signed history request.
      expect(seen.json('/conversations/request/anna').map((r) => r.op)).toContain('history')
    })
  },
)

/**
 * Three forgeries of a setting on anna's request topic, by the intruder's broker login: signed with
 * another key; anna's last signed request with its args changed; a replay of her first. All three
 * refused (two `bad-mac`, one `replayed-nonce`) before the caller checks nothing changed.
 */
async function forgeSetting(
  w: PhoneWorld,
  op: string,
  args: Record<string, unknown>,
  sent: Array<Record<string, unknown>>,
): Promise<void> {
  const intruder = await w.raw(USERS.intruder)
  const topic = `${w.topics.base}/conversations/request/anna`
  const other = { device: w.deviceId, phone: 'anna', key: new Uint8Array(32).fill(5) }
  const forged = phoneRequestMessage(other, 'forged-1', op, args, Date.now())
  const changed = { ...(sent.at(-1) ?? {}), id: 'forged-2', args }
  for (const m of [forged, changed, sent[0]]) {
    await intruder.publishAsync(topic, JSON.stringify(m), { qos: 1 })
  }
  await until(
    () =>
      (w.refusedRequests()['bad-mac'] ?? 0) === 2 &&
      (w.refusedRequests()['replayed-nonce'] ?? 0) === 1,
    'the three forged requests refused',
  )
}
