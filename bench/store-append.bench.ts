// How long one transcript append holds the event loop. better-sqlite3 is synchronous, so this is
// time the audio path cannot run: it must stay far below one 20 ms audio frame.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStore } from '../src/adapters/sqlite/sqlite-store.js'
import { machineLine, quantile } from './machine.js'

const N = 5000
const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), 'nocturn-bench-')), 'b.db'))
const conv = store.createConversation({ channel: 'voice', at: 0 })
const text = 'Could you turn the hallway light down to forty percent, please?'
const times: number[] = []
for (let i = 0; i < N; i++) {
  const t0 = process.hrtime.bigint()
  store.append(conv.id, { role: 'user', text, channel: 'voice', at: i })
  times.push(Number(process.hrtime.bigint() - t0) / 1e6)
}
times.sort((a, b) => a - b)
const t0 = process.hrtime.bigint()
const loaded = store.messages(conv.id)
const loadMs = Number(process.hrtime.bigint() - t0) / 1e6
store.close()
console.log(machineLine())
console.table({
  'append (WAL, synchronous=NORMAL)': {
    n: N,
    'p50 ms': +quantile(times, 0.5).toFixed(4),
    'p99 ms': +quantile(times, 0.99).toFixed(4),
    'max ms': +(times.at(-1) ?? 0).toFixed(3),
  },
})
console.log(`load ${loaded.length} messages: ${loadMs.toFixed(2)} ms`)
