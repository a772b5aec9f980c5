import { GeminiLive } from '../../adapters/gemini/gemini-live.js'
import { GeminiLLM } from '../../adapters/gemini/gemini-llm.js'
import { NocturnError } from '../../core/errors.js'
import { defaultPersona, type Persona } from '../../core/persona.js'
import type { Config } from '../config/schema.js'
import type { Composition } from './composition.js'

/** The provider's API key, checked before anything is opened: without it nothing can answer. */
export function providerKey(c: Config): string {
  const apiKey = c.provider.apiKey
  if (!apiKey) {
    throw new NocturnError(
      'NOC_ERR_GEMINI_NO_KEY',
      'no Gemini API key: set GEMINI_API_KEY, GEMINI_API_KEY_FILE, the "gemini-api-key" credential, or provider.apiKeyFile',
    )
  }
  return apiKey
}

/** Who the speaker is: the configured persona, each part the default where unset. */
function personaOf(c: Config): Persona {
  return {
    instruction: c.persona.instruction ?? defaultPersona.instruction,
    voice: c.persona.voice ?? defaultPersona.voice,
    language: c.persona.language ?? defaultPersona.language,
  }
}

/**
 * The models: the LiveLLM the voice driver speaks with, the LLM that answers typed messages, and
 * the persona both are given.
 * Neither connects here; the SDK loads with the first connection (docs/gemini.md).
 */
export function composeProviders(
  { config: c, clock, log }: Composition,
  apiKey: string,
): { live: GeminiLive; llm: GeminiLLM; persona: Persona } {
  const live = new GeminiLive({
    apiKey,
    model: c.provider.model,
    ...(c.provider.baseUrl && { baseUrl: c.provider.baseUrl }),
    logger: log.child({ component: 'gemini-live' }),
    clock,
  })
  const llm = new GeminiLLM({
    apiKey,
    model: c.provider.textModel,
    ...(c.provider.baseUrl && { baseUrl: c.provider.baseUrl }),
    logger: log.child({ component: 'gemini' }),
  })
  return { live, llm, persona: personaOf(c) }
}
