// Appends messages as fast as it can and prints each sequence number once its append returned.
// The crash test kills it with SIGKILL mid-stream.
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'

const [path, conversationId] = process.argv.slice(2) as [string, string]
const store = new SqliteStore(path)
const body = 'x'.repeat(2000) // large enough that a torn write would show
for (let i = 1; ; i++) {
  const m = store.append(conversationId, {
    role: 'user',
    text: `${i}:${body}`,
    channel: 'voice',
    at: i,
  })
  process.stdout.write(`${m.seq}\n`)
}
