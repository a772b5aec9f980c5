import { describe, expect, it } from 'vitest'
import { lookupCapabilities } from '../../src/adapters/gemini/capabilities.js'
import { geminiLive, KEY, memoryLogger } from './helpers.js'

describe('the capability table (gemini-live.md §2.3)', () => {
  it.each([
    ['gemini-3.8-live', true, true, true],
    ['gemini-3.8-live-extended-thinking', true, false, false],
    ['gemini-3.1-flash-live-preview', false, true, false],
    ['gemini-2.5-flash-native-audio-preview-12-2025', true, true, true],
    ['gemini-2.5-flash-native-audio-preview-09-2025', true, true, true],
    ['models/gemini-2.5-flash-native-audio-latest', true, true, true],
    ['gemini-2.5-flash-preview-native-audio-dialog', false, true, false],
    ['gemini-2.5-flash-exp-native-audio-thinking-dialog', false, true, false],
    ['gemini-live-2.5-flash-preview', true, true, true],
    ['gemini-2.0-flash-live-001', true, true, true],
    ['gemini-3.5-live-translate-preview', false, true, false],
  ])(
    '%s: async %s, blocking allowed %s, scheduling %s',
    (model, asyncCalls, blocking, scheduling) => {
      const { capabilities: c, known } = lookupCapabilities(model)
      expect(known).toBe(true)
      expect([c.asyncToolCalls, c.blockingAllowed, c.scheduling]).toEqual([
        asyncCalls,
        blocking,
        scheduling,
      ])
    },
  )

  it('an unknown model gets the safe answer, and the adapter warns at startup', () => {
    const { capabilities, known } = lookupCapabilities('gemini-4.0-live-preview')
    expect(known).toBe(false)
    expect(capabilities.asyncToolCalls).toBe(false)
    const { logger, parsed } = memoryLogger()
    const live = geminiLive({ model: 'gemini-4.0-live-preview', logger })
    expect(live.capabilities.asyncToolCalls).toBe(false)
    expect(parsed().map((l) => [l.level, l.event])).toEqual([
      [40, 'model_unknown'],
      [40, 'approvals_dead_air'],
    ])
  })
})

describe('createClient', () => {
  it('ignores a stray GOOGLE_GEMINI_BASE_URL: the key goes only where we say', async () => {
    const { createClient } = await import('../../src/adapters/gemini/client.js')
    const before = process.env.GOOGLE_GEMINI_BASE_URL
    process.env.GOOGLE_GEMINI_BASE_URL = 'http://evil.example'
    try {
      const ai = await createClient({ apiKey: KEY })
      const apiClient = (ai as unknown as { apiClient: { getBaseUrl(): string } }).apiClient
      expect(apiClient.getBaseUrl()).toBe('https://generativelanguage.googleapis.com/')
    } finally {
      if (before === undefined) delete process.env.GOOGLE_GEMINI_BASE_URL
      else process.env.GOOGLE_GEMINI_BASE_URL = before
    }
  })
})
