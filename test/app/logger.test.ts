import { PassThrough } from 'node:stream'
import { expect, it } from 'vitest'
import { createLogger } from '../../src/app/logger.js'

it('log lines are JSON and never carry transcripts or secrets', async () => {
  const out = new PassThrough()
  const log = createLogger({ level: 'info', destination: out })
  log.info(
    {
      event: 'turn_answered',
      pii: { text: 'unlock the front door' },
      apiKey: 'AIza-secret',
      mqtt: { password: 'hunter2' },
    },
    'turn answered',
  )
  await new Promise((r) => setImmediate(r))
  const line = String(out.read())
  const parsed = JSON.parse(line)
  expect(parsed.event).toBe('turn_answered')
  expect(line).not.toContain('front door')
  expect(line).not.toContain('AIza-secret')
  expect(line).not.toContain('hunter2')
})
