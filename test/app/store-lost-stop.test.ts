import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { type NocturnProcess, startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { numberIn, storePromise } from '../helpers/store-promise.js'
import { until } from '../helpers/wait.js'

/**
 * docs/store.md, "A stop": SIGTERM ends `nocturn run` within a second (the table's number),
 * whatever the store's file watch did before it, and a stop never closes a store whose file is
 * gone without writing it back. Three times the promise for a loaded machine; the hang this
 * guards against lasted until systemd's SIGKILL, 10 s.
 */
const STOP_LIMIT_MS = 3 * 1000 * numberIn(storePromise('SIGTERM').lost, /within (\d+) s/)

let nocturn: NocturnProcess | undefined
let server: FakeLiveServer | undefined
afterEach(async () => {
  await nocturn?.stop('SIGKILL')
  nocturn = undefined
  await server?.close()
  server = undefined
})

/** `nocturn run` on WAV silence, no broker (nothing here needs a system package), its store in `work`. */
async function startRun(work: string): Promise<NocturnProcess> {
  const run = await spawnRun(work)
  await run.waitForEvent('nocturn_running')
  return run
}

/** The same, not yet waited for. */
async function spawnRun(work: string): Promise<NocturnProcess> {
  server = await FakeLiveServer.start({ logger: silentLogger, scripts: () => ({ steps: [] }) })
  const silence = Buffer.alloc(32_000)
  writeFileSync(
    join(work, 'silence.wav'),
    Buffer.concat([wavHeader(16_000, silence.length), silence]),
  )
  const config = writeRunConfig(
    work,
    { baseUrl: server.baseUrl, inputWav: join(work, 'silence.wav'), brokerUrl: '' },
    { mqtt: undefined, panel: { backend: 'none' } },
  )
  return startNocturnRun(config, { apiKey: 'stop-key-not-for-logs' })
}

/** SIGTERM, and how long until the process was gone. */
async function stopTimed(run: NocturnProcess): Promise<{ code: number | null; ms: number }> {
  const sent = performance.now()
  const { code } = await run.stop('SIGTERM', 20_000)
  return { code, ms: performance.now() - sent }
}

it('SIGTERM after the file watch wrote a deleted store back exits at once', async () => {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-stop-'))
  const path = join(work, 'nocturn.db')
  nocturn = await startRun(work)
  await until(() => existsSync(`${path}.backup`), 'the backup file', 60_000)
  rmSync(path)
  await nocturn.waitForEvent('store_file_lost', 15_000)

  const { code, ms } = await stopTimed(nocturn)
  expect(code, nocturn.tail()).toBe(0)
  expect(ms, nocturn.tail()).toBeLessThan(STOP_LIMIT_MS)
}, 60_000)

it('SIGTERM while it is still starting is kept: it starts, then stops cleanly, exit 0', async () => {
  // systemd's stop can come at any moment of a start; the default action would end the process
  // without closing the store. The first warning is logged early in the start.
  nocturn = await spawnRun(mkdtempSync(join(tmpdir(), 'nocturn-stop-')))
  await nocturn.waitForEvent('no_mqtt_configured')
  const { code } = await stopTimed(nocturn)
  expect(code, nocturn.tail()).toBe(0)
  expect(nocturn.saw('nocturn_running'), nocturn.tail()).toBe(true)
  expect(
    nocturn.lines.some((l) => l.msg === 'stopping'),
    nocturn.tail(),
  ).toBe(true)
}, 60_000)

it('SIGTERM after a start that restored the store from its copy exits at once', async () => {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-stop-'))
  const path = join(work, 'nocturn.db')
  const seeded = new SqliteStore(path)
  seeded.createConversation({ channel: 'text', at: 1 })
  seeded.close()
  renameSync(path, `${path}.backup`) // the card lost the store; its copy is there
  nocturn = await startRun(work)
  expect(nocturn.saw('store_restored'), nocturn.tail()).toBe(true)

  const { code, ms } = await stopTimed(nocturn)
  expect(code, nocturn.tail()).toBe(0)
  expect(ms, nocturn.tail()).toBeLessThan(STOP_LIMIT_MS)
}, 60_000)

it('a store deleted with its copies just before SIGTERM is written back at the stop: nothing is lost', async () => {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-stop-'))
  const path = join(work, 'nocturn.db')
  const seeded = new SqliteStore(path)
  const conv = seeded.createConversation({ channel: 'text', at: 1 })
  seeded.append(conv.id, { role: 'user', text: 'the chat of yesterday', channel: 'text', at: 2 })
  seeded.close()

  nocturn = await startRun(work)
  // The first look at the file made the copy; the next is 2 s away: delete everything now and
  // stop before it comes, as someone running `rm nocturn.db*` and then `systemctl stop` would.
  await until(() => existsSync(`${path}.backup`), 'the backup file', 60_000)
  for (const f of readdirSync(work)) if (f.startsWith('nocturn.db')) rmSync(join(work, f))
  const { code, ms } = await stopTimed(nocturn)
  expect(code, nocturn.tail()).toBe(0)
  expect(ms, nocturn.tail()).toBeLessThan(STOP_LIMIT_MS)

  // Found at the stop, not by the running watch: the stop's own look is what kept it.
  const stopping = nocturn.lines.findIndex((l) => l.msg === 'stopping')
  const lost = nocturn.lines.findIndex((l) => l.event === 'store_file_lost')
  expect(stopping, nocturn.tail()).toBeGreaterThanOrEqual(0)
  expect(lost, nocturn.tail()).toBeGreaterThan(stopping)
  expect(String(nocturn.lines[lost]?.reason)).toMatch(/nothing was lost/)

  const reopened = new SqliteStore(path)
  expect(reopened.messages(conv.id).map((m) => m.role === 'user' && m.text)).toEqual([
    'the chat of yesterday',
  ])
  reopened.close()
}, 60_000)
