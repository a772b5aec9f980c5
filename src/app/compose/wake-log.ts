import type { SqliteStore } from '../../adapters/sqlite/sqlite-store.js'
import { WakeLog } from '../../device/wake-log.js'
import { listenMode } from '../config/schema.js'
import type { Composition } from './composition.js'

/**
 * The speaker's recent wakes, for the household to teach it (docs/wake-word.md, "Teaching it"):
 * only a speaker that listens for a wake word keeps one.
 */
export function composeWakeLog(
  { config: c, clock, log }: Composition,
  store: SqliteStore,
): WakeLog | undefined {
  if (listenMode(c.listen) !== 'wake') return undefined
  return new WakeLog({
    store: store.wakes,
    transcripts: store,
    clock,
    logger: log.child({ component: 'wake-log' }),
    // In `auto` the local check holds a wake only once it has agreed with the model's confirmations.
    confirmAsked: c.listen.confirm.enabled || c.listen.localCheck.enabled === true,
  })
}
