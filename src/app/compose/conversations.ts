import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { SqliteStore } from '../../adapters/sqlite/sqlite-store.js'
import { ConversationService } from '../../conversations/conversation-service.js'
import { LiveConversations } from '../../conversations/live-conversations.js'
import { startRetention } from '../../conversations/retention.js'
import { TranscriptFeed } from '../../conversations/transcript-feed.js'
import type { Gate } from '../../core/gate.js'
import type { Persona } from '../../core/persona.js'
import type { ToolSet } from '../../core/tool-set.js'
import type { ShownState } from '../../panel/shown-state.js'
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
  closers.add(() => store.close())
  return { store, feed: new TranscriptFeed(store, log.child({ component: 'feed' })) }
}

/** A store that cannot be written shows as `error` on the LED and the status until it can again. */
export function showStoreHealth({ log }: Composition, store: SqliteStore, shown: ShownState): void {
  store.onWriteHealth((failing) => {
    if (failing) log.error({ event: 'store_unwritable', err: failing }, 'store cannot be written')
    else log.info({}, 'store writable again')
    shown.fault('store', failing)
  })
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
