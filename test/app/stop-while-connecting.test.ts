import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { freePort, mosquittoBroker } from '../helpers/brokers.js'
import { startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { missingCommands, REQUIRE_SYSTEM } from '../helpers/system.js'

const missing = missingCommands('mosquitto', 'mosquitto_passwd')
if (missing) {
  process.stdout.write(`skipped: ${missing}\n`)
  if (REQUIRE_SYSTEM) throw new Error(`NOCTURN_REQUIRE_SYSTEM: ${missing}`)
}

/**
 * A stop asked for in the first moments of a start (systemd restarting the speaker, a person
 * pressing Ctrl-C), while the household's broker connection is still being made: `nocturn run`
 * closes and exits. It used to close everything and then stay up: mqtt.js's graceful end of a
 * connection not yet made answered at once and let the socket finish its handshake, which kept
 * the process alive ("mqtt connected" after "stopping") until systemd's SIGKILL, 10 s on.
 */
describe.skipIf(missing)('stopped while the broker connection is being made', () => {
  const closers: (() => Promise<unknown> | unknown)[] = []
  afterAll(async () => {
    for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
  })

  it('exits cleanly, and does not connect after it began to stop', async () => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-stop-connecting-'))
    writeFileSync(
      join(work, 'silence.wav'),
      Buffer.concat([wavHeader(16_000, 32_000), Buffer.alloc(32_000)]),
    )
    const broker = mosquittoBroker(await freePort())
    await broker.start()
    closers.push(() => broker.stop())
    const server = await FakeLiveServer.start({ scripts: [], logger: silentLogger })
    closers.push(() => server.close())
    const config = writeRunConfig(work, {
      baseUrl: server.baseUrl,
      inputWav: join(work, 'silence.wav'),
      brokerUrl: broker.url,
    })
    const nocturn = startNocturnRun(config, { apiKey: 'stop-connecting-key' })
    closers.push(() => nocturn.stop('SIGKILL'))
    // The connection is begun right after this line (appliance.ts): the stop comes while it is made.
    await nocturn.waitForEvent('nocturn_running')
    const ended = await nocturn.stop('SIGTERM', 5000)
    expect(ended).toEqual({ code: 0, signal: null })
    const msgs = nocturn.lines.map((l) => l.msg)
    expect(msgs).toContain('stopping')
    expect(msgs.slice(msgs.indexOf('stopping'))).not.toContain('mqtt connected')
  }, 60_000)
})
