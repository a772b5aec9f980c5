import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { GeminiLive } from './gemini-live.js'
import { GeminiLLM } from './gemini-llm.js'

export interface GeminiModelsOptions {
  readonly apiKey: string
  /** The live (speech-to-speech) model. */
  readonly model: string
  /** The typed-chat model. */
  readonly textModel: string
  readonly baseUrl?: string | undefined
  readonly logger: Logger
  readonly clock: Clock
}

/**
 * Gemini's two models: the LiveLLM the voice driver speaks with and the LLM that answers typed
 * messages. Neither connects here; the SDK loads with the first connection (docs/gemini.md).
 */
export function geminiModels(o: GeminiModelsOptions): { live: GeminiLive; llm: GeminiLLM } {
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
  }
}
