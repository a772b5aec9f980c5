import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type { LiveLLM } from '../../ports/live-llm.js'
import type { LLM } from '../../ports/llm.js'
import type { Speech } from '../../ports/speech.js'
import type { ProviderConfig, ProviderKind } from '../config/schema.js'

/**
 * A provider's models: the one the voice driver speaks with, the one typed messages get, and the
 * speech announcements are said with.
 */
export interface ProviderModels {
  readonly live: LiveLLM
  readonly llm: LLM
  readonly speech: Speech
}

interface ProviderEntry<K extends ProviderKind> {
  /** Imports the adapter (only the configured one is ever loaded) and makes its models. */
  readonly models: (
    config: Extract<ProviderConfig, { kind: K }> & { apiKey: string },
    deps: { readonly logger: Logger; readonly clock: Clock },
  ) => Promise<ProviderModels>
}

/**
 * Every live provider, by its `provider.kind`: a second one is its adapter folder, its variant in
 * the config schema, its name in config/provider-names.ts and one line here. The adapter is
 * imported when the appliance composes it, the way app/audio.ts loads only the chosen backend.
 */
const PROVIDERS: { readonly [K in ProviderKind]: ProviderEntry<K> } = {
  gemini: {
    models: async (config, deps) =>
      (await import('../../adapters/gemini/models.js')).geminiModels({ ...config, ...deps }),
  },
  openai: {
    models: async (config, deps) =>
      (await import('../../adapters/openai/models.js')).openaiModels({
        ...config,
        logger: deps.logger.child({ component: 'openai' }),
        clock: deps.clock,
      }),
  },
}

/** The configured provider's models, its adapter imported now. */
export function providerModels(
  config: ProviderConfig & { apiKey: string },
  deps: { readonly logger: Logger; readonly clock: Clock },
): Promise<ProviderModels> {
  return modelsOf(config, deps)
}

/** One kind's entry with its own config variant (TypeScript cannot pair them through a union). */
function modelsOf<K extends ProviderKind>(
  config: Extract<ProviderConfig, { kind: K }> & { apiKey: string },
  deps: { readonly logger: Logger; readonly clock: Clock },
): Promise<ProviderModels> {
  const entry: ProviderEntry<K> = PROVIDERS[config.kind as K]
  return entry.models(config, deps)
}
