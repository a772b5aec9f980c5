import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { StoreNotice } from '../../src/adapters/sqlite/restore.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

function freshPath(): string {
  return join(mkdtempSync(join(tmpdir(), 'nocturn-stoplost-')), 'nocturn.db')
}

/** Every file of the store, its log and its copies: `rm nocturn.db*`. */
function removeAll(path: string): void {
  for (const f of readdirSync(dirname(path))) {
    if (f.startsWith('nocturn.db')) rmSync(join(dirname(path), f), { recursive: true })
  }
}

/**
 * A store whose upkeep runs on a clock that never moves: no look at the file happens on its own,
 * so whatever is found is found by the stop (docs/store.md, "A stop").
 */
function running(path: string) {
  const store = new SqliteStore(path)
  const notices: StoreNotice[] = []
  const stop = store.startUpkeep({ clock: new VirtualClock(), onNotice: (n) => notices.push(n) })
  const conv = store.createConversation({ channel: 'text', at: 1 })
  const say = (text: string, at: number) =>
    store.append(conv.id, { role: 'user', text, channel: 'text', at })
  return { store, notices, stop, conv, say }
}

function textsIn(path: string, conversationId: string): unknown[] {
  const reopened = new SqliteStore(path)
  try {
    return reopened.messages(conversationId).map((m) => m.role === 'user' && m.text)
  } finally {
    reopened.close()
  }
}

describe('the stop looks at the store file (issue 43)', () => {
  it('a file deleted with its log and copies, before any look, is written back at the stop: nothing lost, one typed after the deletion too', async () => {
    const path = freshPath()
    const { store, notices, stop, conv, say } = running(path)
    say('before', 2)
    removeAll(path)
    say('after the deletion', 3)
    await stop()
    expect(notices.map((n) => n.event)).toEqual(['store_file_lost'])
    expect(notices[0]?.message).toMatch(
      /was deleted while Nocturn ran, found as it stopped; .*nothing was lost/,
    )
    say('while the rest closes', 4)
    store.close()
    expect(textsIn(path, conv.id)).toEqual([
      'before',
      'after the deletion',
      'while the rest closes',
    ])
  })

  it('close looks too: a file lost after the upkeep stopped, or with no upkeep at all, is written back', async () => {
    const path = freshPath()
    const { store, stop, conv, say } = running(path)
    say('before', 2)
    await stop()
    removeAll(path)
    say('after the upkeep', 3)
    const closing: StoreNotice[] = []
    store.close((n) => closing.push(n))
    expect(closing.map((n) => n.event)).toEqual(['store_file_lost'])
    expect(textsIn(path, conv.id)).toEqual(['before', 'after the upkeep'])

    const plain = new SqliteStore(path) // as `nocturn transcripts` opens it: no upkeep
    plain.append(conv.id, { role: 'user', text: 'by a command', channel: 'text', at: 4 })
    removeAll(path)
    plain.close()
    expect(textsIn(path, conv.id)).toEqual(['before', 'after the upkeep', 'by a command'])
  })

  it('a file that cannot be written back is said at the stop with what is lost and what the next start finds', async () => {
    const path = freshPath()
    const { store, notices, stop, say } = running(path)
    say('before', 2)
    removeAll(path)
    mkdirSync(`${path}.rewrite.tmp`) // where the image would go: taken, so it cannot be written
    await stop()
    expect(notices.map((n) => n.event)).toEqual(['store_file_unrecoverable'])
    expect(notices[0]?.message).toMatch(
      /was deleted while Nocturn ran and cannot be written again there \(.*\): everything it holds is lost now that Nocturn stops — there is no copy: the next start begins an empty store/,
    )
    const closing: StoreNotice[] = []
    store.close((n) => closing.push(n))
    expect(closing.map((n) => n.event)).toEqual(['store_file_unrecoverable'])
    expect(existsSync(path)).toBe(false)
  })
})
