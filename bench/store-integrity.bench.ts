// What the start-up integrity check (PRAGMA quick_check, run by every store open) costs on a
// store holding a year of chats: 10 spoken sessions a day for 365 days, 12 messages each (user,
// assistant, a tool call and its result now and then), about 44 000 messages. Reports the file
// size, quick_check alone, the whole open (which includes it), and the full integrity_check
// for comparison. Medians of RUNS, the file in the OS cache (as on a warm restart).
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { SqliteStore } from '../src/adapters/sqlite/sqlite-store.js'
import { machineLine, quantile } from './machine.js'

const DAYS = 365
const PER_DAY = 10
const RUNS = 7
const path = join(mkdtempSync(join(tmpdir(), 'nocturn-bench-year-')), 'nocturn.db')
const store = new SqliteStore(path)
const DAY = 86_400_000
let messages = 0
const t0 = Date.now() - DAYS * DAY
for (let d = 0; d < DAYS; d++) {
  for (let s = 0; s < PER_DAY; s++) {
    const at = t0 + d * DAY + s * 3_600_000
    const conv = store.createConversation({ channel: 'voice', at })
    for (let m = 0; m < 12; m++) {
      const when = at + m * 5000
      if (m % 6 === 3) {
        store.append(conv.id, {
          role: 'assistant',
          text: '',
          toolCalls: [{ id: `c${m}`, name: 'set_timer', args: { minutes: 10 } }],
          channel: 'voice',
          at: when,
        })
        store.append(conv.id, {
          role: 'tool',
          toolCallId: `c${m}`,
          toolName: 'set_timer',
          args: { minutes: 10 },
          outcome: { ok: true, value: { set: true } },
          channel: 'voice',
          at: when,
        })
        m++
        messages++
      } else if (m % 2 === 0) {
        store.append(conv.id, {
          role: 'user',
          text: `Could you set a timer for the pasta, and what is the weather tomorrow? (${d}/${s})`,
          channel: 'voice',
          at: when,
        })
      } else {
        store.append(conv.id, {
          role: 'assistant',
          text: 'Ten minutes for the pasta, starting now. Tomorrow looks dry, around fourteen degrees.',
          toolCalls: [],
          channel: 'voice',
          at: when,
        })
      }
      messages++
    }
  }
}
store.close()
const ms = (f: () => void) => {
  const t = process.hrtime.bigint()
  f()
  return Number(process.hrtime.bigint() - t) / 1e6
}
const quick: number[] = []
const full: number[] = []
const open: number[] = []
for (let i = 0; i < RUNS; i++) {
  const db = new Database(path)
  quick.push(ms(() => db.pragma('quick_check')))
  full.push(ms(() => db.pragma('integrity_check')))
  db.close()
  open.push(ms(() => new SqliteStore(path).close()))
}
for (const a of [quick, full, open]) a.sort((x, y) => x - y)
console.log(machineLine())
console.log(
  `store: ${DAYS * PER_DAY} conversations, ~${messages} messages, ${(statSync(path).size / 1e6).toFixed(1)} MB`,
)
console.table({
  'PRAGMA quick_check': {
    'median ms': +quantile(quick, 0.5).toFixed(1),
    'max ms': +(quick.at(-1) ?? 0).toFixed(1),
  },
  'PRAGMA integrity_check': {
    'median ms': +quantile(full, 0.5).toFixed(1),
    'max ms': +(full.at(-1) ?? 0).toFixed(1),
  },
  'open (with quick_check)': {
    'median ms': +quantile(open, 0.5).toFixed(1),
    'max ms': +(open.at(-1) ?? 0).toFixed(1),
  },
})
