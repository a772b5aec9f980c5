import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type { StoreNotice } from '../../adapters/sqlite/restore.js'
import { SqliteStore } from '../../adapters/sqlite/sqlite-store.js'
import { ConversationService } from '../../conversations/conversation-service.js'
import { LiveConversations } from '../../conversations/live-conversations.js'
import { startRetention } from '../../conversations/retention.js'
import { TranscriptFeed } from '../../conversations/transcript-feed.js'
import type { Gate } from '../../core/gate.js'
import type { Persona } from '../../core/persona.js'
import type { ToolSet } from '../../core/tool-set.js'
import type { DeviceState } from '../../device/device-state.js'
import type { TimerHandle } from '../../ports/clock.js'
import type { LLM } from '../../ports/llm.js'
import { TurnLoop } from '../../turn/turn-loop.js'
import type { Composition } from './composition.js'

const DAY_MS = 86_400_000

/** The store every conversation is kept in, and the feed that tells its followers what was added. */
export function openConversationStore({ config: c, log, closers }: Composition): {
  store: SqliteStore
  feed: TranscriptFeed
} {
  mkdirSync(dirname(c.store.path), { recursive: true })
  const store = new SqliteStore(c.store.path)
  // The upkeep's last look came before the closers after it; a file lost since is caught here.
  closers.add(() =>
    store.close((n) => log.error({ event: n.event, reason: n.message }, 'store file trouble')),
  )
  return { store, feed: new TranscriptFeed(store, log.child({ component: 'feed' })) }
}

/**
 * How long a store notice (restored from its copy at start, its file lost and written back) holds
 * the LED at `error` and the status's reason: there is no button to acknowledge it with, and an
 * hour is long enough for someone in the household to see it; the log line stays.
 */
export const STORE_NOTICE_SHOWN_MS = 3_600_000

/**
 * The store's health on the LED, the status and the log: writes failing (until they work again),
 * a store restored from its copy at start, a file deleted or replaced under the running device.
 * Also keeps the store's upkeep (checkpoints, the file watch, the copy: docs/store.md) running.
 */
export function showStoreHealth(
  { log, clock, closers }: Composition,
  store: SqliteStore,
  device: DeviceState,
): void {
  store.onWriteHealth((failing) => {
    if (failing) log.error({ event: 'store_unwritable', err: failing }, 'store cannot be written')
    else log.info({}, 'store writable again')
    device.fault('store', failing)
  })
  // Each notice's hour is a real timer: left running at a stop, it held the process open until
  // systemd killed it (issue 43). Cleared after the upkeep's last look, which may add one.
  const shown = new Map<string, TimerHandle>()
  closers.add(() => {
    for (const t of shown.values()) clock.clearTimeout(t)
    shown.clear()
  })
  const notice = (n: StoreNotice) => {
    log.error({ event: n.event, reason: n.message }, 'store file trouble')
    device.fault(n.event, n.message)
    const before = shown.get(n.event)
    if (before) clock.clearTimeout(before)
    shown.set(
      n.event,
      clock.setTimeout(() => {
        shown.delete(n.event)
        device.fault(n.event, undefined)
      }, STORE_NOTICE_SHOWN_MS),
    )
  }
  if (store.restored) notice(store.restored)
  closers.add(store.startUpkeep({ clock, onNotice: notice }))
}

/**
 * A spoken session ended: its transcript goes into the database file and the log is emptied, so
 * between sessions the file on the card is the whole store. A card refusing it is already told by
 * the write health.
 */
export function endOfSession(store: SqliteStore): void {
  try {
    store.checkpoint('TRUNCATE')
  } catch {
    // NOC_ERR_STORE_UNWRITABLE: on the LED and in the status until a write works again.
  }
}

interface TypedSideDeps {
  readonly feed: TranscriptFeed
  readonly llm: LLM
  readonly tools: ToolSet
  readonly gate: Gate
  readonly persona: Persona
}

/** The typed side: messages from a phone answered by the text model, beside any live session. */
export function composeTypedConversations(
  { clock, log }: Composition,
  { feed, llm, tools, gate, persona }: TypedSideDeps,
): { conversations: ConversationService; live: LiveConversations } {
  const live = new LiveConversations()
  const conversations = new ConversationService({
    store: feed,
    turns: new TurnLoop({ llm, tools, gate, store: feed, persona, clock, logger: log }),
    live,
    clock,
    logger: log.child({ component: 'conversations' }),
  })
  return { conversations, live }
}

/** The household's retention (`retention.days`, `retention.keep`), applied once a day; none unset. */
export function keepRetention(
  { config: c, clock, log, closers }: Composition,
  store: SqliteStore,
): void {
  if (c.retention.days === undefined && c.retention.keep === undefined) return
  closers.add(
    startRetention(
      store,
      { days: c.retention.days, keep: c.retention.keep, everyMs: DAY_MS },
      clock,
      log.child({ component: 'retention' }),
    ),
  )
}
