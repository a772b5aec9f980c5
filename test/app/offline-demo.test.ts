import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { runOfflineDemo } from '../../src/app/offline-demo.js'
import { silentLogger } from '../../src/core/logger.js'

it('the offline run continues a spoken conversation by typing, asks the console, and stores it all', async () => {
  const storePath = join(mkdtempSync(join(tmpdir(), 'nocturn-demo-')), 'demo.db')
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => {
    text += c.toString()
  })
  const code = await runOfflineDemo({
    storePath,
    logger: silentLogger,
    out,
    input: new PassThrough(),
    interactive: false,
  })
  expect(code).toBe(0)
  expect(text).toContain('[gate]     waiting for the console: unlock the front door')
  expect(text).toContain('approved automatically (stdin is not a terminal)')
  expect(text).toMatch(/\[nocturn\] {2}It is .+\. The front door is unlocked for the plumber\./)
  expect(text).toContain('door locked: false')

  const store = new SqliteStore(storePath)
  const [conv] = store.listConversations()
  expect(conv?.channel).toBe('voice')
  const messages = store.messages(conv!.id)
  expect(messages.map((m) => `${m.role}/${m.channel}`)).toEqual([
    'user/voice',
    'assistant/voice',
    'user/text',
    'assistant/text',
    'tool/text',
    'tool/text',
    'assistant/text',
  ])
  store.close()
})
