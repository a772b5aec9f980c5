import type { ModelsOptions } from '../live-support/models-options.js'
import { OpenAILLM } from './openai-llm.js'
import { OpenAIRealtime } from './openai-realtime.js'
import { OpenAISpeech } from './openai-speech.js'

interface OpenAIModelsOptions extends ModelsOptions {
  /** What transcribes the room. */
  readonly transcriptionModel: string
  /** The voice when the persona names none of OpenAI's. */
  readonly voice: string
}

/**
 * OpenAI's models: the LiveLLM the voice driver speaks with, the LLM that answers typed messages
 * and the Speech announcements are said with. None connects here; the SDK loads with the first use.
 */
export function openaiModels(o: OpenAIModelsOptions) {
  // Every model reaches the same account at the same place.
  const account = { apiKey: o.apiKey, baseUrl: o.baseUrl }
  return {
    live: new OpenAIRealtime({
      ...account,
      model: o.model,
      voice: o.voice,
      transcriptionModel: o.transcriptionModel,
      logger: o.logger,
      clock: o.clock,
    }),
    llm: new OpenAILLM({ ...account, model: o.textModel, logger: o.logger }),
    speech: new OpenAISpeech({ ...account, model: o.speechModel, voice: o.voice }),
  }
}
