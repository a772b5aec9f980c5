import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { GeminiLive } from './gemini-live.js'
import { GeminiLLM } from './gemini-llm.js'
import { GeminiSpeech } from './gemini-speech.js'

export interface GeminiModelsOptions {
  readonly apiKey: string
  /** The live (speech-to-speech) model. */
  readonly model: string
  /** The typed-chat model. */
  readonly textModel: string
  /** The text-to-speech model announcements are said with. */
  readonly speechModel: string
  readonly baseUrl?: string | undefined
  readonly logger: Logger
  readonly clock: Clock
}

/**
 * Gemini's models: the LiveLLM the voice driver speaks with, the LLM that answers typed messages
 * and the Speech announcements are said with. None connects here; the SDK loads with the first
 * connection (docs/gemini.md).
 */
export function geminiModels(o: GeminiModelsOptions): {
  live: GeminiLive
  llm: GeminiLLM
  speech: GeminiSpeech
} {
  const baseUrl = o.baseUrl ? { baseUrl: o.baseUrl } : {}
  return {
    live: new GeminiLive({
      apiKey: o.apiKey,
      model: o.model,
      ...baseUrl,
      logger: o.logger.child({ component: 'gemini-live' }),
      clock: o.clock,
    }),
    llm: new GeminiLLM({
      apiKey: o.apiKey,
      model: o.textModel,
      ...baseUrl,
      logger: o.logger.child({ component: 'gemini' }),
    }),
    speech: new GeminiSpeech({
      apiKey: o.apiKey,
      model: o.speechModel,
      ...baseUrl,
      logger: o.logger.child({ component: 'gemini' }),
    }),
  }
}
