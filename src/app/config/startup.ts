import type { LoadedConfig } from './load.js'
import { describeProvider } from './provider-names.js'

/**
 * What `nocturn run` needs of a configuration beyond its being valid, checked before anything is
 * opened or created, so a start that cannot succeed touches nothing (no store, no folder, no
 * broker connection). Other commands (doctor, pair, phone) load the same file without these needs.
 */
export function runProblems(loaded: LoadedConfig): string[] {
  const c = loaded.config
  const problems: string[] = []
  if (!c.provider.apiKey) {
    const { name, keyHelp } = describeProvider(c.provider)
    problems.push(`provider.apiKey: no ${name} API key — ${keyHelp}`)
  }
  if (c.homeActions.length > 0 && !c.mqtt) {
    problems.push('homeActions: they need the broker — configure "mqtt" or remove the home actions')
  }
  return problems
}
