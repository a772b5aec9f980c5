// A store in use on the SD card stand-in, with the upkeep running as in the appliance. Lines on
// stdin drive it: "seed" writes what must survive (typed chat, spoken pieces, a timer, a grant),
// "recent" starts writing spoken pieces without end. It is killed with SIGKILL: the power cut.
import { createInterface } from 'node:readline'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'

const [path] = process.argv.slice(2) as [string]
const store = new SqliteStore(path)
store.startUpkeep({
  clock: realClock(),
  onNotice: (n) => process.stdout.write(`notice ${n.event}\n`),
})
let recent: NodeJS.Timeout | undefined
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'seed') {
    const typed = store.createConversation({ channel: 'text', title: 'shopping', at: 1 })
    store.append(typed.id, { role: 'user', text: 'milk and eggs', channel: 'text', at: 2 })
    store.append(typed.id, {
      role: 'assistant',
      text: 'noted',
      toolCalls: [],
      channel: 'text',
      at: 3,
    })
    const spoken = store.createConversation({ channel: 'voice', at: 4 })
    for (let i = 0; i < 10; i++)
      store.append(spoken.id, { role: 'user', text: `piece ${i}`, channel: 'voice', at: 5 + i })
    store.addTimer({ kind: 'timer', label: 'tea', dueAt: Date.now() + 3_600_000, createdAt: 20 })
    process.stdout.write(`seeded ${typed.id} ${spoken.id}\n`)
  } else if (line === 'recent') {
    const spoken = store.createConversation({ channel: 'voice', at: 100 })
    let i = 0
    recent = setInterval(() => {
      try {
        store.append(spoken.id, {
          role: 'user',
          text: `late ${i++}`,
          channel: 'voice',
          at: 100 + i,
        })
      } catch {
        // the card went read-only: the write health says so; the writer keeps trying
      }
    }, 20)
    process.stdout.write('recent\n')
  }
})
process.on('exit', () => clearInterval(recent))
