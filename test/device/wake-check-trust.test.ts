import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { DeviceState } from '../../src/device/device-state.js'
import { EARNED_AFTER, WakeCheckTrust } from '../../src/device/wake-check-trust.js'
import type { Onset } from '../../src/ports/onset.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'

const wake: Onset = {
  cause: 'wake',
  preRoll: new Uint8Array(0),
  atMs: 0,
  wake: { phrase: 'hey jarvis', score: 0.9, heardAtMs: 0, levelDb: -30 },
}
const hold: Onset = { cause: 'button', preRoll: new Uint8Array(0), atMs: 0 }

/**
 * The local check's trust (listen.localCheck.enabled `auto`), on the real store: it earns the
 * right to hold a wake's audio only by agreeing with the model on 5 confirmed wakes in a row, a
 * confirmed wake it refuses starts the count over, unconfirmed wakes do not move it, a refusal
 * followed within 60 s by the button's hold or a phone's "it missed me" sends it back to shadow,
 * and a restart keeps what it earned unless the phrases or the check's settings changed.
 */
describe('the local wake check earns its place', () => {
  const world = (path = ':memory:', key = 'hey jarvis@1e-12') => {
    const store = new SqliteStore(path)
    const clock = new VirtualClock()
    const log = new MemoryLogger()
    const device = new DeviceState()
    const make = (k = key) => new WakeCheckTrust({ store, key: k, clock, logger: log, device })
    /** One wake: the check's verdict, then the session's end (confirmed by the model or not). */
    const once = (t: WakeCheckTrust, agreed: boolean, confirmed: boolean) => {
      t.heard(wake, false)
      t.verdict(agreed)
      t.ended(confirmed)
    }
    return { store, clock, log, device, make, once }
  }

  it('holds audio only after 5 confirmed wakes agreed in a row; a confirmed refusal starts over', () => {
    const w = world()
    const trust = w.make()
    expect(trust.gates).toBe(false)
    expect(w.device.snapshot.wakeCheck).toEqual({ state: 'shadow', streak: 0, of: 5, kept: 0 })
    for (let i = 0; i < EARNED_AFTER - 1; i++) w.once(trust, true, true)
    // A wake the model did not confirm moves nothing, but one it refused is counted as kept.
    w.once(trust, false, false)
    w.once(trust, true, false)
    expect(w.device.snapshot.wakeCheck).toEqual({ state: 'shadow', streak: 4, of: 5, kept: 1 })
    // A confirmed wake it could not hear: the household's voice, refused. Back to 0.
    w.once(trust, false, true)
    expect(trust.gates).toBe(false)
    expect(w.device.snapshot.wakeCheck).toMatchObject({ state: 'shadow', streak: 0 })
    for (let i = 0; i < EARNED_AFTER - 1; i++) w.once(trust, true, true)
    expect(trust.gates).toBe(false)
    // The session may end before the check answers: the verdict settles it when it comes.
    trust.heard(wake, false)
    trust.ended(true)
    expect(trust.gates).toBe(false)
    trust.verdict(true)
    expect(trust.gates).toBe(true)
    expect(w.device.snapshot.wakeCheck).toEqual({ state: 'earned', kept: 1 })
    expect(w.log.withEvent('wake_check_earned').map((r) => r.msg)).toEqual([
      'local wake check earned: it agreed with 5 confirmed wakes in a row',
    ])
  })

  it('a restart keeps it earned; new phrases or settings, or an unreadable value, start over', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'nocturn-trust-')), 'nocturn.db')
    const w = world(path)
    const first = w.make()
    for (let i = 0; i < EARNED_AFTER; i++) w.once(first, true, true)
    expect(first.gates).toBe(true)
    w.store.close()
    const again = world(path)
    expect(again.make().gates).toBe(true)
    expect(again.device.snapshot.wakeCheck).toEqual({ state: 'earned', kept: 0 })
    // Another threshold: what was earned was earned on the old one.
    expect(again.make('hey jarvis@1e-20').gates).toBe(false)
    again.store.close()
    const corrupt = world(path)
    corrupt.store.setSetting('wake_check_trust', '{"key": "hey jarvis@1e-12", "earned": "yes"', 1)
    expect(corrupt.make().gates).toBe(false)
    expect(corrupt.log.withEvent('setting_unreadable')).toHaveLength(1)
    corrupt.store.close()
  })

  it('a refusal followed within 60 s by the button or a missed note sends it back to shadow', async () => {
    const w = world()
    const trust = w.make()
    for (let i = 0; i < EARNED_AFTER; i++) w.once(trust, true, true)
    // Refused, and the button held 61 s later: not evidence of a miss.
    w.once(trust, false, false)
    await w.clock.advance(61_000)
    trust.heard(hold, false)
    expect(trust.gates).toBe(true)
    // Refused, then the button held 20 s later: the household tried again. Back to shadow.
    w.once(trust, false, false)
    await w.clock.advance(20_000)
    trust.heard(hold, false)
    expect(trust.gates).toBe(false)
    expect(w.device.snapshot.wakeCheck).toMatchObject({ state: 'shadow', streak: 0 })
    expect(w.log.withEvent('wake_check_demoted')).toHaveLength(1)
    expect(w.log.withEvent('wake_check_demoted')[0]?.level).toBe('warn')
    // Earned again; a refusal, then a phone's "it missed me" note.
    for (let i = 0; i < EARNED_AFTER; i++) w.once(trust, true, true)
    expect(trust.gates).toBe(true)
    w.once(trust, false, false)
    await w.clock.advance(5_000)
    trust.retried('a phone said "it missed me"')
    expect(trust.gates).toBe(false)
    // It is remembered so: a restart is in shadow too.
    expect(w.make().gates).toBe(false)
  })
})
