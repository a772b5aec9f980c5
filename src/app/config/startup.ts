import type { LoadedConfig } from './load.js'
import { describeProvider } from './provider-names.js'
import { providerPlace } from './schema.js'

/**
 * What `nocturn run` needs of a configuration beyond its being valid, checked before anything is
 * opened or created, so a start that cannot succeed touches nothing (no store, no folder, no
 * broker connection). Other commands (doctor, pair, phone) load the same file without these needs.
 */
export function runProblems(loaded: LoadedConfig): string[] {
  const c = loaded.config
  const problems: string[] = []
  c.providers.forEach((provider, i) => {
    if (provider.apiKey) return
    const { name, keyHelp } = describeProvider(provider)
    problems.push(`${providerPlace(c, i)}.apiKey: no ${name} API key — ${keyHelp}`)
  })
  if (c.homeActions.length > 0 && !c.mqtt) {
    problems.push('homeActions: they need the broker — configure "mqtt" or remove the home actions')
  }
  return problems
}
