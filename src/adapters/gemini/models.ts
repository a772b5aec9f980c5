import type { ModelsOptions } from '../live-support/models-options.js'
import { GeminiLive } from './gemini-live.js'
import { GeminiLLM } from './gemini-llm.js'
import { GeminiSpeech } from './gemini-speech.js'

/**
 * Gemini's models: the LiveLLM the voice driver speaks with, the LLM that answers typed messages
 * and the Speech announcements are said with. None connects here; the SDK loads with the first
 * connection (docs/gemini.md).
 */
export function geminiModels(o: ModelsOptions) {
  // Every model reaches the same account at the same place.
  const account = { apiKey: o.apiKey, baseUrl: o.baseUrl }
  const logger = o.logger.child({ component: 'gemini' })
  return {
    live: new GeminiLive({
      ...account,
      model: o.model,
      logger: o.logger.child({ component: 'gemini-live' }),
      clock: o.clock,
    }),
    llm: new GeminiLLM({ ...account, model: o.textModel, logger }),
    speech: new GeminiSpeech({ ...account, model: o.speechModel, logger }),
  }
}
