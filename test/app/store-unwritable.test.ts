import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { startAppliance } from '../../src/app/appliance.js'
import type { Appliance } from '../../src/app/compose/appliance-contract.js'
import { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { until } from '../helpers/wait.js'
import { wavApplianceConfig } from '../helpers/wav-appliance.js'

/** A small tmpfs of our own, so the store's filesystem can fill up under it. */
function smallDisk(): { dir: string; fill(): void; release(): void } | undefined {
  const dir = join(mkdtempSync(join(tmpdir(), 'nocturn-ro-')), 'disk')
  mkdirSync(dir)
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]).status !== 0) {
    process.stdout.write('skipped: cannot mount a tmpfs here (needs root)\n')
    return undefined
  }
  return {
    dir,
    // (A read-only remount is refused while the store is open for writing; a full disk is not.)
    fill: () => {
      for (let i = 0; ; i++) {
        try {
          writeFileSync(join(dir, `filler-${i}`), Buffer.alloc(64 * 1024))
        } catch {
          break
        }
      }
      for (let i = 0; ; i++) {
        try {
          writeFileSync(join(dir, `crumb-${i}`), Buffer.alloc(512))
        } catch {
          break
        }
      }
    },
    release: () => void spawnSync('umount', ['-l', dir]),
  }
}

/**
 * Issue 16 item 10: the store's disk fills up under a running appliance. Speech keeps
 * arriving and a timer comes due. Nothing may crash (the timer's bookkeeping used to throw out of
 * its callback and take the process down), the LED shows `error` with the reason, and the failed
 * sessions are a few log lines, not dozens per utterance.
 */
describe('a store whose disk fills up while running', () => {
  const disk = smallDisk()
  let appliance: Appliance | undefined
  let server: FakeLiveServer | undefined
  afterAll(async () => {
    await appliance?.close()
    await server?.close()
    disk?.release()
  })

  it.skipIf(!disk)(
    'the timer still rings, the LED shows error and why, nothing crashes',
    async () => {
      if (!disk) return
      const work = mkdtempSync(join(tmpdir(), 'nocturn-ro-work-'))
      const path = join(disk.dir, 'nocturn.db')
      // A timer set earlier, due a few seconds after the start: it must come due on a full disk.
      const dueAt = Date.now() + 6000
      const before = new SqliteStore(path)
      before.addTimer({ kind: 'timer', label: 'tea', dueAt, createdAt: Date.now() })
      before.close()
      server = await FakeLiveServer.start({ scripts: [], logger: new MemoryLogger() })
      const log = new MemoryLogger()
      appliance = await startAppliance({
        loaded: wavApplianceConfig(work, server.baseUrl, path, {
          session: { idleTimeoutSeconds: 2 },
        }),
        logger: log,
        wavLoop: true,
      })
      disk.fill()
      // Else the timer's bookkeeping would have found room, and this test would prove nothing.
      if (Date.now() >= dueAt)
        throw new Error(
          'the appliance took too long to start: the timer came due before the disk was full',
        )
      await until(
        () => log.withEvent('timer_ringing').length > 0,
        "log.withEvent('timer_ringing').length > 0",
        60_000,
      )
      await until(
        () => appliance?.panel.led === 'error',
        "appliance?.panel.led === 'error'",
        60_000,
      )
      const failed = log.withEvent('store_unwritable')
      expect(failed.length).toBe(1)
      expect(String(failed[0]?.fields.err)).toMatch(/cannot write the store at .*nocturn\.db/)
      // Speech keeps coming (the file loops); failed sessions are summarised.
      await new Promise((r) => setTimeout(r, 6000))
      expect(log.withEvent('session_failed').length).toBeLessThanOrEqual(3)
      expect(appliance.panel.led).toBe('error')
    },
    60_000,
  )
})
