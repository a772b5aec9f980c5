import { expect, it } from 'vitest'
import { startRetention } from '../../src/conversations/retention.js'
import { silentLogger } from '../../src/core/logger.js'
import { coreFixture } from '../helpers/core.js'

it('applies retention at start and on schedule, by age and by count', async () => {
  const { store, clock } = coreFixture()
  const day = 86_400_000
  const old = store.createConversation({ channel: 'voice', at: clock.now() - 40 * day })
  const recent = store.createConversation({ channel: 'voice', at: clock.now() - day })
  const stop = startRetention(store, { days: 30, keep: 3, everyMs: day }, clock, silentLogger)
  expect(store.getConversation(old.id)).toBeUndefined()
  expect(store.getConversation(recent.id)).toBeDefined()
  for (let i = 0; i < 4; i++) store.createConversation({ channel: 'text', at: clock.now() + i })
  await clock.advance(day)
  expect(store.listConversations()).toHaveLength(3)
  expect(store.getConversation(recent.id)).toBeUndefined()
  stop()
  expect(clock.pending).toBe(0)
})
