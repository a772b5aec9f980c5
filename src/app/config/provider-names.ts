import type { ProviderConfig, ProviderKind } from './schema.js'

/**
 * Each live provider's name as the household knows it, and how to give it its API key (said when
 * the key is missing). Kept with the config, which checks for the key before anything is composed;
 * its models are app/compose/provider-registry.ts's.
 */
const NAMES: { readonly [K in ProviderKind]: { readonly name: string; readonly keyHelp: string } } =
  {
    gemini: {
      name: 'Gemini',
      keyHelp:
        'set GEMINI_API_KEY, GEMINI_API_KEY_FILE, the "gemini-api-key" credential, or provider.apiKeyFile',
    },
    openai: {
      name: 'OpenAI',
      keyHelp:
        'set OPENAI_API_KEY, OPENAI_API_KEY_FILE, the "openai-api-key" credential, or provider.apiKeyFile',
    },
  }

/** The configured provider's name and how to give it its API key. */
export function describeProvider(config: ProviderConfig): { name: string; keyHelp: string } {
  const { name, keyHelp } = NAMES[config.kind]
  return { name, keyHelp }
}
