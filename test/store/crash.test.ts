import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'

it('a process killed with SIGKILL mid-append loses no acknowledged message and tears none', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'nocturn-crash-')), 'store.db')
  const setup = new SqliteStore(path)
  const conv = setup.createConversation({ channel: 'voice', at: 0 })
  setup.close()

  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'append-child.ts'), path, conv.id],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let acknowledged = 0
  let buffered = ''
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop() ?? ''
      for (const l of lines) acknowledged = Math.max(acknowledged, Number(l))
      // Kill it while it is busy writing, well into the stream.
      if (acknowledged >= 300 && child.exitCode === null && !child.killed) child.kill('SIGKILL')
    })
    child.on('exit', () => resolve())
  })
  expect(child.signalCode).toBe('SIGKILL')
  expect(acknowledged).toBeGreaterThanOrEqual(300)

  const store = new SqliteStore(path)
  const messages = store.messages(conv.id)
  expect(messages.length).toBeGreaterThanOrEqual(acknowledged)
  messages.forEach((m, i) => {
    expect(m.seq).toBe(i + 1)
    expect(m.role === 'user' && m.text).toBe(`${i + 1}:${'x'.repeat(2000)}`)
  })
  // Still writable and continuable after the crash.
  store.append(conv.id, { role: 'assistant', text: 'after', toolCalls: [], channel: 'text', at: 1 })
  expect(store.messages(conv.id).at(-1)?.seq).toBe(messages.length + 1)
  store.close()
}, 30_000)
