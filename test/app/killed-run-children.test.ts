import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { wavHeader } from '../../src/audio/wav.js'
import { silentLogger } from '../../src/core/logger.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { fakeGpiod, liveStandIns } from '../helpers/fake-gpiod.js'
import { type NocturnProcess, startNocturnRun, writeRunConfig } from '../helpers/nocturn-process.js'
import { until } from '../helpers/wait.js'

const closers: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await Promise.resolve(c()).catch(() => {})
})

/**
 * A `nocturn run` a test kills outright cannot end the gpiomon it started; on a device systemd's
 * cgroup does. The harness ends the process group, or the stand-ins outlive the test run (two
 * were left after every CI run before this).
 */
it('a nocturn run killed with SIGKILL leaves no gpiomon behind', async () => {
  const work = mkdtempSync(join(tmpdir(), 'nocturn-killed-'))
  const gpiod = fakeGpiod(2)
  closers.push(() => gpiod.cleanup())
  gpiod.scriptMonitor([[]])
  const server = await FakeLiveServer.start({
    logger: silentLogger,
    scripts: () => ({ steps: [] }),
  })
  closers.push(() => server.close())
  const silence = Buffer.alloc(32_000)
  writeFileSync(join(work, 'in.wav'), Buffer.concat([wavHeader(16_000, silence.length), silence]))
  const config = writeRunConfig(
    work,
    { baseUrl: server.baseUrl, inputWav: join(work, 'in.wav'), brokerUrl: '' },
    { mqtt: undefined, panel: { backend: 'gpiod', button: 'GPIO17' } },
  )
  const nocturn: NocturnProcess = startNocturnRun(config, {
    apiKey: 'killed-run-key',
    env: gpiod.env,
  })
  closers.push(() => nocturn.stop('SIGKILL'))
  await nocturn.waitForEvent('nocturn_running')
  await until(
    () => gpiod.log().some((e) => e.tool === 'gpiomon' && e.event === 'spawn'),
    'gpiomon started',
    30_000,
  )
  const standIns = () => liveStandIns(gpiod).filter((pid) => pid !== nocturn.child.pid)
  expect(standIns().length).toBeGreaterThan(0)

  const ended = await nocturn.stop('SIGKILL')

  expect(ended.signal).toBe('SIGKILL')
  await until(() => standIns().length === 0, 'the stand-ins gone', 10_000)
})
