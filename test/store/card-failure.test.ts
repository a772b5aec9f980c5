import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { CHECKPOINT_EVERY_MS } from '../../src/adapters/sqlite/store-connection.js'
import { ext4Disk } from '../helpers/ext4-disk.js'

const disk = ext4Disk()
afterAll(() => disk?.release())

/** Starts the writer and hands back a reader of its lines. */
function writer(path: string): {
  child: ChildProcessWithoutNullStreams
  line(prefix: string): Promise<string>
} {
  const child = spawn(process.execPath, [
    '--import',
    'tsx',
    join(import.meta.dirname, 'durable-child.ts'),
    path,
  ])
  child.stderr.pipe(process.stderr)
  const waiting: { prefix: string; resolve: (l: string) => void }[] = []
  createInterface({ input: child.stdout }).on('line', (l) => {
    const i = waiting.findIndex((w) => l.startsWith(w.prefix))
    if (i >= 0) waiting.splice(i, 1)[0]?.resolve(l)
  })
  return {
    child,
    line: (prefix) => new Promise((resolve) => waiting.push({ prefix, resolve })),
  }
}

/**
 * Issue 26, item 1: the store's filesystem hits an ext4 error and turns read-only mid-session (as
 * a failing SD card does), the device loses power, the card is checked and it boots again. What
 * was written more than a checkpoint interval before must all be there — not an empty store.
 */
it.skipIf(!disk)(
  'a card turned read-only mid-session keeps everything written more than a checkpoint before',
  async () => {
    if (!disk) return
    const path = join(disk.dir, 'nocturn.db')
    const w = writer(path)
    const seeded = w.line('seeded')
    w.child.stdin.write('seed\n')
    const [, typedId, spokenId] = (await seeded).split(' ') as [string, string, string]
    // Older than the promise: two and a half checkpoint intervals.
    await new Promise((r) => setTimeout(r, 2.5 * CHECKPOINT_EVERY_MS))
    const recent = w.line('recent')
    w.child.stdin.write('recent\n')
    await recent
    await new Promise((r) => setTimeout(r, 500))
    disk.fail()
    await new Promise((r) => setTimeout(r, 300))
    w.child.kill('SIGKILL')
    await new Promise((r) => w.child.once('exit', r))
    disk.repair()

    const store = new SqliteStore(path)
    try {
      expect(store.restored).toBeUndefined()
      expect(store.messages(typedId).map((m) => m.role !== 'tool' && m.text)).toEqual([
        'milk and eggs',
        'noted',
      ])
      expect(store.messages(spokenId).map((m) => m.role !== 'tool' && m.text)).toEqual(
        Array.from({ length: 10 }, (_, i) => `piece ${i}`),
      )
      expect(store.pendingTimers().map((t) => t.label)).toEqual(['tea'])
      expect(store.getConversation(typedId)?.title).toBe('shopping')
    } finally {
      store.close()
    }
  },
  60_000,
)
