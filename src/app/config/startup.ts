import type { LoadedConfig } from './load.js'

/**
 * What `nocturn run` needs of a configuration beyond its being valid, checked before anything is
 * opened or created, so a start that cannot succeed touches nothing (no store, no folder, no
 * broker connection). Other commands (doctor, pair, phone) load the same file without these needs.
 */
export function runProblems(loaded: LoadedConfig): string[] {
  const c = loaded.config
  const problems: string[] = []
  if (!c.provider.apiKey) {
    problems.push(
      'provider.apiKey: no Gemini API key — set GEMINI_API_KEY, GEMINI_API_KEY_FILE, the "gemini-api-key" credential, or provider.apiKeyFile',
    )
  }
  if (c.homeActions.length > 0 && !c.mqtt) {
    problems.push('homeActions: they need the broker — configure "mqtt" or remove the home actions')
  }
  return problems
}
