import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { type Appliance, startAppliance } from '../../src/app/appliance.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { until } from '../helpers/alsa.js'
import { wavApplianceConfig } from '../helpers/wav-appliance.js'

let appliance: Appliance | undefined
let server: FakeLiveServer | undefined
afterAll(async () => {
  await appliance?.close()
  await server?.close()
})

/**
 * Issue 26, item 2: the store file is deleted under the running appliance. It is found within
 * seconds (the LED at error, a log line with its event), written back from the open database, and
 * a chat typed before, during and after is all there after a restart.
 */
it('a store file deleted under the running device is found, said, and written back whole', async () => {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-lost-'))
  const path = join(work, 'nocturn.db')
  server = await FakeLiveServer.start({ scripts: [], logger: new MemoryLogger() })
  const log = new MemoryLogger()
  appliance = await startAppliance({
    loaded: wavApplianceConfig(work, server.baseUrl, path),
    logger: log,
    wavPaced: false,
  })
  const store = appliance.store
  const conv = store.createConversation({ channel: 'text', at: 1 })
  const say = (text: string, at: number) =>
    store.append(conv.id, { role: 'user', text, channel: 'text', at })
  say('before', 2)
  await until(() => existsSync(`${path}.backup`), 50)
  const goneAt = Date.now()
  rmSync(path)
  say('meanwhile', 3)
  await until(() => log.withEvent('store_file_lost').length > 0, 50)
  const foundMs = Date.now() - goneAt
  expect(foundMs).toBeLessThan(10_000)
  expect(appliance.panel.led).toBe('error')
  expect(String(log.withEvent('store_file_lost')[0]?.fields.reason)).toMatch(
    /store file at .*nocturn\.db was deleted while Nocturn ran; .*nothing was lost/,
  )
  say('after', 4)
  await appliance.close()
  appliance = undefined

  const reopened = new SqliteStore(path)
  expect(reopened.messages(conv.id).map((m) => m.role === 'user' && m.text)).toEqual([
    'before',
    'meanwhile',
    'after',
  ])
  reopened.close()
}, 60_000)
