import { closeSync, openSync, statSync, writeSync } from 'node:fs'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'

/** A store with enough chats to span many pages, closed (checkpointed) so the file holds them. */
export function storeWithChats(path: string, conversations = 40): void {
  const s = new SqliteStore(path)
  for (let c = 0; c < conversations; c++) {
    const conv = s.createConversation({ channel: 'voice', at: c })
    for (let m = 0; m < 20; m++) {
      const text = `message ${m} of chat ${c}: ${'words about the weather and the kitchen '.repeat(4)}`
      const at = c * 100 + m
      s.append(
        conv.id,
        m % 2
          ? { role: 'assistant', text, toolCalls: [], channel: 'voice', at }
          : { role: 'user', text, channel: 'voice', at },
      )
    }
  }
  s.close()
}

/** Scribbles over one page in the middle of the file, as a bad SD card sector would. */
export function damagePage(path: string): void {
  const size = statSync(path).size
  const page = 4096
  const at = Math.floor(size / page / 2) * page
  const fd = openSync(path, 'r+')
  writeSync(fd, Buffer.alloc(page, 0xa5), 0, page, at)
  closeSync(fd)
}
