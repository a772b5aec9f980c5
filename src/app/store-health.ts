import type { StoreNotice } from '../adapters/sqlite/restore.js'
import type { SqliteStore } from '../adapters/sqlite/sqlite-store.js'
import type { Logger } from '../core/logger.js'
import type { ShownState } from '../panel/shown-state.js'
import type { Clock } from '../ports/clock.js'

/**
 * How long a store notice (restored from its copy, its file lost and written back) holds the LED
 * at `error` and the status's reason: there is no button to acknowledge it with, and an hour is
 * long enough for someone in the household to see it; the log line stays.
 */
export const STORE_NOTICE_SHOWN_MS = 3_600_000

/**
 * The store's health on the LED, the status and the log: writes failing (until they work again),
 * a store restored from its copy at start, a file deleted or replaced under the running device.
 * Also keeps the store's upkeep (checkpoints, the file watch, the copy) running; the returned
 * function stops it.
 */
export function showStoreHealth(
  store: SqliteStore,
  shown: ShownState,
  log: Logger,
  clock: Clock,
): () => Promise<void> {
  store.onWriteHealth((failing) => {
    if (failing) log.error({ event: 'store_unwritable', err: failing }, 'store cannot be written')
    else log.info({}, 'store writable again')
    shown.fault('store', failing)
  })
  const notice = (n: StoreNotice) => {
    log.error({ event: n.event, err: n.message }, 'store file trouble')
    shown.fault(n.event, n.message)
    clock.setTimeout(() => shown.fault(n.event, undefined), STORE_NOTICE_SHOWN_MS)
  }
  if (store.restored) notice(store.restored)
  return store.startUpkeep({ clock, onNotice: notice })
}

/**
 * A spoken session ended: its transcript goes into the database file and the log is emptied, so
 * between sessions the file on the card is the whole store. A card refusing it is told by the
 * write health already.
 */
export function endOfSession(store: SqliteStore): void {
  try {
    store.checkpoint('TRUNCATE')
  } catch {
    // NOC_ERR_STORE_UNWRITABLE: on the LED and in the status until a write works again.
  }
}
