import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { SqliteStore } from '../../adapters/sqlite/sqlite-store.js'
import { errorText } from '../../core/errors.js'
import { ConfigError } from '../config/errors.js'
import { configPathOf, DEFAULT_CONFIG_PATH, loadConfig } from '../config/load.js'
import type { Io } from './pair.js'
import { parsedOrUsage } from './parsed-or-usage.js'

/** The store of a development checkout without a configuration. */
const DEV_STORE = 'var/nocturn-dev.db'

export const USAGE = `usage: nocturn transcripts list [--config <path>] [--store <path>]
       nocturn transcripts show <id> [--config <path>] [--store <path>]
       nocturn transcripts delete <id> [--config <path>] [--store <path>]

  list         the newest 100 conversations with their tokens, and the tokens since the 1st
  show <id>    one conversation's messages
  delete <id>  deletes it for good and vacuums the file

The store is the speaker's: store.path of its configuration, the file "nocturn run" reads
(--config, else $NOCTURN_CONFIG, else ${DEFAULT_CONFIG_PATH} when it exists). --store names
the store file itself and wins over the configuration. Without a configuration (a development
checkout) the store is ${DEV_STORE}; npm start keeps its own in var/offline/nocturn.db.
A store that does not exist is an error: this never creates one. No secret is read.
`

/** `nocturn transcripts`: read and delete stored conversations on the device itself. */
export function run(args: string[]): Promise<number> {
  return transcripts(args, { out: process.stdout, err: process.stderr, env: process.env })
}

export async function transcripts(args: string[], io: Io): Promise<number> {
  const fail = (message: string, code = 1) => {
    io.err.write(`nocturn transcripts: ${message}\n`)
    return code
  }
  const parsed = parsedOrUsage('transcripts', () => parse(args), { err: io.err, usage: USAGE })
  if (!parsed) return 2
  const { values, positionals } = parsed
  const [verb, id] = positionals
  if (!(verb === 'list' && id === undefined) && !((verb === 'show' || verb === 'delete') && id)) {
    io.err.write(USAGE)
    return 2
  }

  // The configuration only when --store does not name the file: no secret is read for it.
  const configPath = values.store === undefined ? configPathOf(values.config, io.env) : undefined
  let path = values.store ?? DEV_STORE
  if (configPath !== undefined) {
    try {
      path = loadConfig({ path: configPath, env: io.env, secrets: false }).config.store.path
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      return fail(err.problems.join('\n'), 2)
    }
  }
  // Opening a path that is not there would create an empty store and list nothing, as if the
  // household's chats were gone: say where it looked instead.
  if (!existsSync(path)) {
    const where =
      values.store !== undefined
        ? '--store'
        : configPath !== undefined
          ? `store.path in ${configPath}`
          : `the development default, in ${resolve('.')}; there is no configuration at $NOCTURN_CONFIG or ${DEFAULT_CONFIG_PATH}`
    const fix =
      configPath !== undefined
        ? 'check store.path there (the speaker creates the file when it first runs), or pass --config <path> or --store <path>'
        : "pass --config <path> of the speaker's configuration (its store.path is used), or --store <path> (after npm start: --store var/offline/nocturn.db)"
    return fail(`no store at ${path} (${where}) — ${fix}; nothing was created`)
  }

  let store: SqliteStore
  try {
    store = new SqliteStore(path)
  } catch (err) {
    return fail(errorText(err))
  }
  try {
    if (verb === 'list') {
      for (const c of store.listConversations({ limit: 100 })) {
        const when = new Date(c.updatedAt).toISOString()
        const tokens = `${store.usage({ conversationId: c.id })} tokens`.padStart(14)
        io.out.write(`${c.id}  ${c.channel.padEnd(5)}  ${when}  ${tokens}  ${c.title ?? ''}\n`)
      }
      // What a household's talking costs: the model's tokens since the first of this month.
      const now = new Date()
      const month = new Date(now.getFullYear(), now.getMonth(), 1)
      io.out.write(
        `${store.usage({ since: month.getTime() })} tokens since ${month.toDateString()}\n`,
      )
      return 0
    }
    const conversation = id ?? ''
    if (!store.getConversation(conversation)) {
      return fail(`no conversation ${conversation} in ${path}`)
    }
    if (verb === 'delete') {
      store.deleteConversation(conversation)
      store.vacuum()
      io.out.write(`deleted ${conversation}\n`)
      return 0
    }
    for (const m of store.messages(conversation)) {
      const body =
        m.role === 'tool'
          ? `${m.toolName} → ${m.outcome.ok ? JSON.stringify(m.outcome.value) : m.outcome.error}`
          : m.role === 'assistant' && m.toolCalls.length > 0
            ? `${m.text}${m.text ? ' ' : ''}(calls ${m.toolCalls.map((c) => c.name).join(', ')})`
            : m.text
      io.out.write(
        `${String(m.seq).padStart(4)} ${m.channel.padEnd(5)} ${m.role.padEnd(9)} ${body}\n`,
      )
    }
    return 0
  } finally {
    store.close()
  }
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: { config: { type: 'string' }, store: { type: 'string' } },
  })
}
