import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { expect, it } from 'vitest'
import { runOffline } from '../../src/app/offline-run.js'
import { silentLogger } from '../../src/core/logger.js'

it('the offline run: speech opens a session, a phone approves over the broker, the lock gets the command, the chat is read back and continued by typing', async () => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => {
    text += c.toString()
  })
  const code = await runOffline({
    out,
    logger: silentLogger,
    root: join(import.meta.dirname, '../..'),
    timeoutMs: 30_000,
  })
  expect(code, text).toBe(0)
  // The events, in the order a person in the room would see them.
  const order = [
    '[led]     listening',
    '[person]  Please unlock the front door for the plumber.',
    '[tool]    unlock_front_door called',
    "[nocturn] I've asked Anna's phone; one moment.",
    '[phone]   outcome: approved',
    '[lock]    home/front-door/set ← {"state":"UNLOCK"}',
    '[nocturn] The front door is unlocked.',
    '[session] closed (idle)',
    '— the spoken session, read back as a chat —',
    '  voice tool      unlock_front_door → done',
    '[typed]   Thanks! Who let the plumber in?',
    '[nocturn] You are welcome.',
    '7 messages stored in one conversation',
  ]
  let at = 0
  for (const line of order) {
    const i = text.indexOf(line, at)
    expect(i, `"${line}" after position ${at} in:\n${text}`).toBeGreaterThan(-1)
    at = i + line.length
  }
  // The phone shows the request while the model explains the wait (the two race, both are right),
  // and the lock moved only after the phone said yes.
  const shown = text.indexOf('[phone]   Anna\'s phone shows: "unlock the front door"')
  expect(shown).toBeGreaterThan(text.indexOf('unlock_front_door called'))
  expect(shown).toBeLessThan(text.indexOf('outcome: approved'))
  expect(text.indexOf('outcome: approved')).toBeLessThan(text.indexOf('[lock]'))
}, 60_000)
