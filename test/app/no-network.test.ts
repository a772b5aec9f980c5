import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import type { Appliance } from '../../src/app/compose/appliance-contract.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { freePort } from '../helpers/brokers.js'
import { keyedAppliance } from '../helpers/keyed-appliance.js'
import { until } from '../helpers/wait.js'

/**
 * Issue 42 item 4: with no network at all — no provider reachable (its address refuses every
 * connection), no broker — the speaker is still a clock: a timer and an alarm come due and ring
 * into the speaker, the button stops each ring, and the button's mute mutes and unmutes. The real
 * appliance on the WAV speaker, the terminal panel's keys as the button, speech in the room
 * looping so sessions keep trying and failing meanwhile.
 */
describe('no network at all: timers ring, the button stops them and mutes', () => {
  let appliance: Appliance | undefined
  afterAll(async () => {
    await appliance?.close()
  })

  it('a timer and an alarm ring with no provider reachable; a press stops each; mute works', async () => {
    const work = mkdtempSync(join(tmpdir(), 'nocturn-no-network-'))
    const before = new SqliteStore(join(work, 'nocturn.db'))
    const now = Date.now()
    before.addTimer({ kind: 'timer', label: 'tea', dueAt: now + 3000, createdAt: now })
    before.addTimer({ kind: 'alarm', label: null, dueAt: now + 9000, createdAt: now })
    before.close()
    // Nothing listens here: every attempt to reach the provider is refused at once.
    const nowhere = `http://127.0.0.1:${await freePort()}`
    const log = new MemoryLogger()
    const started = await keyedAppliance(work, nowhere, log)
    appliance = started.appliance
    const keys = started.keys
    const a = appliance
    const speakerBytes = () => statSync(join(work, 'speaker.wav')).size
    // The room talks; a session opens and cannot reach the provider.
    await until(
      () => log.withEvent('voice_connection_failed').length > 0,
      'a session failing to reach the provider',
      20_000,
    )

    await until(() => a.device.snapshot.ringing.length === 1, 'the timer ringing', 20_000)
    const ringFrom = speakerBytes()
    await until(() => speakerBytes() > ringFrom + 24_000, 'the ring reaching the speaker')
    keys.write('m') // a press while ringing stops the ring
    await until(() => a.device.snapshot.ringing.length === 0, 'the timer stopped by the press')
    expect(a.device.muted).toBe(false) // the press stopped the ring; it did not mute

    keys.write('m')
    await until(() => a.device.muted, 'muted by the button')
    expect(a.panel.led).toBe('muted')

    // The alarm rings while muted (mute is the microphone's), and a press stops it too.
    await until(() => a.device.snapshot.ringing.length === 1, 'the alarm ringing', 20_000)
    expect(log.withEvent('timer_ringing').map((r) => r.fields.kind)).toEqual(['timer', 'alarm'])
    keys.write('m')
    await until(() => a.device.snapshot.ringing.length === 0, 'the alarm stopped by the press')
    keys.write('m')
    await until(() => !a.device.muted, 'unmuted by the button')
    // No provider was ever reached meanwhile.
    expect(log.withEvent('connection_opened')).toHaveLength(0)
  }, 60_000)
})
