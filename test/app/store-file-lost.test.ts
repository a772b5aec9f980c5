import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { EmbeddedBroker } from '../../src/adapters/aedes/broker.js'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { startAppliance } from '../../src/app/appliance.js'
import type { Appliance } from '../../src/app/compose/appliance-contract.js'
import { silentLogger } from '../../src/core/logger.js'
import { DEFAULT_PREFIX, topicsFor } from '../../src/protocol/index.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { numberIn, storePromise } from '../helpers/store-promise.js'
import { until } from '../helpers/wait.js'
import { wavApplianceConfig } from '../helpers/wav-appliance.js'

let appliance: Appliance | undefined
let server: FakeLiveServer | undefined
afterEach(async () => {
  await appliance?.close()
  appliance = undefined
  await server?.close()
  server = undefined
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
  await until(() => existsSync(`${path}.backup`), 'the backup file', 60_000)
  const goneAt = Date.now()
  rmSync(path)
  say('meanwhile', 3)
  await until(
    () => log.withEvent('store_file_lost').length > 0,
    "log.withEvent('store_file_lost').length > 0",
    60_000,
  )
  const foundMs = Date.now() - goneAt
  // docs/store.md: found within 2 s; a second more for a loaded machine's late timer.
  const withinS = numberIn(
    storePromise('The file deleted or replaced while').lost,
    /within (\d+) s/,
  )
  expect(foundMs).toBeLessThan((withinS + 1) * 1000)
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

/**
 * Issue 43, item 1: the file deleted and the store stopped before the 2 s look came, the file
 * cannot be written back at the stop. The loss is said with where the store went and what the next
 * start finds: in the log with its event, and in the status the phones and Home Assistant read,
 * before the device says it is offline.
 */
it('a store that cannot be written back at the stop says so in the log and the status', async () => {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-lost-'))
  const path = join(work, 'nocturn.db')
  const broker = new EmbeddedBroker({ port: 0, prefix: DEFAULT_PREFIX, logger: silentLogger })
  await broker.start()
  const observer = new MqttConnection({
    url: broker.url,
    clientId: 'observer',
    logger: silentLogger,
    clock: realClock(),
  })
  const statusTopic = topicsFor(DEFAULT_PREFIX, 'kitchen').status
  const statuses: { online?: boolean; state?: string; reason?: string }[] = []
  observer.onMessage((topic, payload) => {
    if (topic === statusTopic) statuses.push(JSON.parse(payload.toString()))
  })
  observer.start()
  await observer.ready()
  await observer.subscribe([statusTopic])
  server = await FakeLiveServer.start({ scripts: [], logger: new MemoryLogger() })
  const log = new MemoryLogger()
  try {
    appliance = await startAppliance({
      loaded: wavApplianceConfig(work, server.baseUrl, path, {
        mqtt: { url: broker.url, deviceId: 'kitchen' },
        phoneApp: { enabled: false },
      }),
      logger: log,
      wavPaced: false,
    })
    await until(
      () => statuses.some((s) => s.online === true),
      'statuses.some((s) => s.online === true)',
      60_000,
    )
    const conv = appliance.store.createConversation({ channel: 'text', at: 1 })
    appliance.store.append(conv.id, { role: 'user', text: 'kept?', channel: 'text', at: 2 })
    // Right after the first look (it made the copy): the next is 2 s away.
    await until(() => existsSync(`${path}.backup`), 'the backup file', 60_000)
    for (const f of [path, `${path}-wal`, `${path}-shm`, `${path}.backup`])
      rmSync(f, { force: true })
    mkdirSync(`${path}.rewrite.tmp`) // where the image would be written: taken
    expect(log.withEvent('store_file_unrecoverable')).toEqual([])
    await appliance.close()
    appliance = undefined

    const said = log.withEvent('store_file_unrecoverable').map((r) => String(r.fields.reason))
    expect(said.length).toBeGreaterThan(0)
    expect(said[0]).toMatch(
      /nocturn\.db was deleted while Nocturn ran and cannot be written again there .*everything it holds is lost now that Nocturn stops — there is no copy: the next start begins an empty store/,
    )
    await until(
      () => statuses.at(-1)?.online === false,
      'statuses.at(-1)?.online === false',
      60_000,
    )
    const last = statuses.findLast((s) => s.online !== false)
    expect(last?.state).toBe('error')
    expect(last?.reason).toBe(said[0])
  } finally {
    await observer.close()
    await broker.stop()
  }
}, 60_000)
