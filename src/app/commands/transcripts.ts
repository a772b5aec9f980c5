import { parseArgs } from 'node:util'
import { SqliteStore } from '../../adapters/sqlite/sqlite-store.js'

const USAGE = 'usage: nocturn transcripts list | show <id> | delete <id>  [--store path]\n'

/** `nocturn transcripts`: read and delete stored conversations on the device itself. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { store: { type: 'string', default: 'var/nocturn-dev.db' } },
  })
  const [verb, id] = positionals
  const store = new SqliteStore(values.store ?? 'var/nocturn-dev.db')
  try {
    if (verb === 'list') {
      for (const c of store.listConversations({ limit: 100 })) {
        const when = new Date(c.updatedAt).toISOString()
        const tokens = `${store.usage({ conversationId: c.id })} tokens`.padStart(14)
        process.stdout.write(
          `${c.id}  ${c.channel.padEnd(5)}  ${when}  ${tokens}  ${c.title ?? ''}\n`,
        )
      }
      // What a household's talking costs: the model's tokens since the first of this month.
      const now = new Date()
      const month = new Date(now.getFullYear(), now.getMonth(), 1)
      process.stdout.write(
        `${store.usage({ since: month.getTime() })} tokens since ${month.toDateString()}\n`,
      )
      return 0
    }
    if ((verb === 'show' || verb === 'delete') && id) {
      if (!store.getConversation(id)) {
        process.stderr.write(`nocturn: no conversation ${id}\n`)
        return 1
      }
      if (verb === 'delete') {
        store.deleteConversation(id)
        store.vacuum()
        process.stdout.write(`deleted ${id}\n`)
        return 0
      }
      for (const m of store.messages(id)) {
        const body =
          m.role === 'tool'
            ? `${m.toolName} → ${m.outcome.ok ? JSON.stringify(m.outcome.value) : m.outcome.error}`
            : m.role === 'assistant' && m.toolCalls.length > 0
              ? `${m.text}${m.text ? ' ' : ''}(calls ${m.toolCalls.map((c) => c.name).join(', ')})`
              : m.text
        process.stdout.write(
          `${String(m.seq).padStart(4)} ${m.channel.padEnd(5)} ${m.role.padEnd(9)} ${body}\n`,
        )
      }
      return 0
    }
    process.stderr.write(USAGE)
    return 2
  } finally {
    store.close()
  }
}
