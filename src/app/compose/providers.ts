import { NocturnError } from '../../core/errors.js'
import { defaultPersona, type Persona } from '../../core/persona.js'
import { describeProvider } from '../config/provider-names.js'
import type { Config } from '../config/schema.js'
import type { Composition } from './composition.js'
import { type ProviderModels, providerModels } from './provider-registry.js'

/** The provider's API key, checked before anything is opened: without it nothing can answer. */
export function providerKey(c: Config): string {
  const apiKey = c.provider.apiKey
  if (!apiKey) {
    const { name, keyHelp } = describeProvider(c.provider)
    throw new NocturnError('NOC_ERR_PROVIDER_NO_KEY', `no ${name} API key: ${keyHelp}`)
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
 * The models: the LiveLLM the voice driver speaks with, the LLM that answers typed messages, the
 * Speech announcements are said with (the configured provider's, through the registry), and the
 * persona they are given.
 */
export async function composeProviders(
  { config: c, clock, log }: Composition,
  apiKey: string,
): Promise<ProviderModels & { persona: Persona }> {
  const models = await providerModels({ ...c.provider, apiKey }, { logger: log, clock })
  return { ...models, persona: personaOf(c) }
}
