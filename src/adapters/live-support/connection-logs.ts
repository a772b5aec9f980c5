import { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'

/**
 * What every live adapter does as it is made: refuse a missing key with a clear error, and warn
 * about a model its capability table does not know or whose calls block (approvals would be dead
 * air). Returns where each next connection logs: the adapter's log, with `conn` 1, 2, …
 */
export function connectionLogs(
  o: { readonly apiKey: string; readonly model: string; readonly logger: Logger },
  who: { readonly provider: string; readonly component: string; readonly label: string },
  lookup: { readonly known: boolean; readonly capabilities: { readonly asyncToolCalls: boolean } },
): () => Logger {
  if (!o.apiKey)
    throw new NocturnError('NOC_ERR_PROVIDER_NO_KEY', `no ${who.provider} API key was given`)
  const log = o.logger.child({ component: who.component, model: o.model })
  if (!lookup.known) {
    log.warn(
      { event: 'model_unknown' },
      `${who.label} model not in the capability table: assuming no asynchronous calls`,
    )
  }
  if (!lookup.capabilities.asyncToolCalls) {
    log.warn(
      { event: 'approvals_dead_air' },
      `this ${who.label} model has no asynchronous calls: approvals will be dead air`,
    )
  }
  let connections = 0
  return () => log.child({ conn: ++connections })
}
