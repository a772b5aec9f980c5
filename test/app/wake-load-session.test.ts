import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import { Closers } from '../../src/app/compose/composition.js'
import { loadWake } from '../../src/app/compose/wake-load.js'
import { parseConfig } from '../../src/app/config/load.js'
import { silentLogger } from '../../src/core/logger.js'
import { DeviceState } from '../../src/device/device-state.js'
import { MODEL_DIR, silence } from '../helpers/wake.js'

// The wake load, as the appliance composes it, tells the detector whether a session is under way
// (the device's activity): only then may scoring rest for an event loop that runs late, so the
// loop carries the session's audio first; idle, a rest would only leave a slow board's quota
// unused while chunks drop (docs/wake-word.md, "Never waiting on scoring"). A real detector on
// the native runtime, its reply held back by a loop kept busy past the detector's limits.

const FRAME_BYTES = 640

const opened: { closers: Closers; dir: string }[] = []
afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.closers.close()
    rmSync(o.dir, { recursive: true, force: true })
  }
})

async function loaded(device: DeviceState): Promise<OpenWakeWordDetector> {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-wake-session-'))
  const { config } = parseConfig(
    JSON.stringify({
      audio: { backend: 'wav', inputWav: '/nonexistent.wav', outputWav: join(dir, 'out.wav') },
      listen: {
        wake: { models: [{ model: 'hey_jarvis' }], modelDir: MODEL_DIR, runtime: 'native' },
      },
      store: { path: join(dir, 'nocturn.db') },
      phoneApp: { enabled: false },
    }),
    join(dir, 'config.json'),
  )
  const closers = new Closers(silentLogger)
  opened.push({ closers, dir })
  const load = loadWake(
    { config, clock: realClock(), log: silentLogger, closers },
    device,
    undefined,
  )
  if (!load) throw new Error('wake mode composed no wake load')
  const d = (await load.detector) as OpenWakeWordDetector
  closers.add(() => d.close())
  return d
}

/**
 * A request's worth of voiced audio pushed (four 80 ms chunks: the coarse hop's two scores), then
 * the loop held past a quota period while the runtime's thread scores it.
 */
async function slowRequest(d: OpenWakeWordDetector, at: number): Promise<number> {
  const pcm = silence(320)
  for (let o = 0; o < pcm.length; o += FRAME_BYTES) {
    d.push(pcm.subarray(o, o + FRAME_BYTES), at, true)
    at += 20
  }
  const until = performance.now() + 400
  while (performance.now() < until) {
    // The event loop busy: the thread's reply waits, and the loop runs late.
  }
  await new Promise((r) => setTimeout(r, 300))
  return at
}

describe('the wake load tells its detector whether a session is under way', () => {
  it('rests for a late loop while the speaker listens to someone, never while idle', async () => {
    const device = new DeviceState()
    const d = await loaded(device)
    let at = Date.now()
    for (let k = 0; k < 3; k++) at = await slowRequest(d, at)
    expect(d.stats().chunksScored).toBeGreaterThan(0)
    expect(d.stats().rests).toBe(0)

    device.setActivity('listening')
    for (let k = 0; k < 3; k++) at = await slowRequest(d, at)
    expect(d.stats().rests).toBeGreaterThan(0)
  }, 60_000)
})
