import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { OpenAILLM } from './openai-llm.js'
import { OpenAIRealtime } from './openai-realtime.js'
import { OpenAISpeech } from './openai-speech.js'

export interface OpenAIModelsOptions {
  readonly apiKey: string
  /** The realtime (speech-to-speech) model. */
  readonly model: string
  /** The typed-chat model. */
  readonly textModel: string
  /** The text-to-speech model announcements are said with. */
  readonly speechModel: string
  /** What transcribes the room. */
  readonly transcriptionModel: string
  /** The voice when the persona names none of OpenAI's. */
  readonly voice: string
  readonly baseUrl?: string | undefined
  readonly logger: Logger
  readonly clock: Clock
}

/**
 * OpenAI's models: the LiveLLM the voice driver speaks with, the LLM that answers typed messages
 * and the Speech announcements are said with. None connects here; the SDK loads with the first use.
 */
export function openaiModels(o: OpenAIModelsOptions): {
  live: OpenAIRealtime
  llm: OpenAILLM
  speech: OpenAISpeech
} {
  const baseUrl = o.baseUrl ? { baseUrl: o.baseUrl } : {}
  return {
    live: new OpenAIRealtime({
      apiKey: o.apiKey,
      model: o.model,
      voice: o.voice,
      transcriptionModel: o.transcriptionModel,
      ...baseUrl,
      logger: o.logger,
      clock: o.clock,
    }),
    llm: new OpenAILLM({ apiKey: o.apiKey, model: o.textModel, ...baseUrl, logger: o.logger }),
    speech: new OpenAISpeech({
      apiKey: o.apiKey,
      model: o.speechModel,
      voice: o.voice,
      ...baseUrl,
    }),
  }
}
