import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAlsaSpeaker } from '../../src/adapters/alsa/alsa-speaker.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { ALERT_FLOOR_PERCENT, GainOut, gainOf } from '../../src/audio/gain-out.js'
import { silentLogger } from '../../src/core/logger.js'
import { ToolSet } from '../../src/core/tool-set.js'
import { DeviceState } from '../../src/device/device-state.js'
import { remember, remembered, VOLUME } from '../../src/device/remembered-settings.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { volumeTool } from '../../src/tools/volume.js'
import { hermeticAlsa } from '../helpers/alsa.js'
import { coreFixture } from '../helpers/core.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'

const skip = missingCommands('aplay', 'mkfifo')
const RATE = 24_000

const closers: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c()
})

/** A recognisable signal: a ramp over the whole 16-bit range, 0.5 s at 24 kHz. */
function ramp(): Buffer {
  const n = RATE / 2
  const b = Buffer.alloc(n * 2)
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(-32000 + (64000 * i) / (n - 1)), i * 2)
  return b
}

/** One boot of the device: the store, the device state restored from it, the gain over real aplay. */
function boot(path: string) {
  const store = new SqliteStore(path)
  const clock = new VirtualClock()
  const device = new DeviceState({ volume: remembered(VOLUME, store, silentLogger) })
  remember(VOLUME, device, store, clock, silentLogger)
  const alsa = hermeticAlsa(new Uint8Array(640))
  const s = createAlsaSpeaker({
    device: alsa.playback,
    clock,
    env: alsa.env,
    backoff: { initialMs: 20, maxMs: 200, healthyMs: 5000 },
    onError: () => {},
    stallMs: Number.POSITIVE_INFINITY,
    logger: silentLogger,
    endPaddingUs: 1_020_000,
  })
  const gain = new GainOut(s.speaker, () => device.volume)
  closers.push(() => store.close())
  closers.push(() => s.speaker.close())
  return { store, clock, device, alsa, gain }
}

/** Everything the players wrote to the file PCM. */
function played(alsa: { played(): Buffer[] }): Buffer {
  return Buffer.concat(alsa.played())
}

function scaled(src: Buffer, percent: number): Buffer {
  const g = gainOf(percent)
  const out = Buffer.alloc(src.byteLength)
  for (let i = 0; i < src.byteLength; i += 2) {
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(src.readInt16LE(i) * g))), i)
  }
  return out
}

describe.skipIf(skip)('volume: the one gain stage before a real aplay on a file-backed PCM', () => {
  it('the samples that leave are scaled as set (by voice), alerts keep their floor, and a restart keeps the setting', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'nocturn-volume-')), 'nocturn.db')
    const signal = ramp()
    const first = boot(path)
    // By voice: the built-in tool, allowed on the voice channel without a phone.
    const f = coreFixture()
    const tools = new ToolSet([volumeTool(first.device)])
    const said = await tools.call(f.ctx({ channel: 'voice' }), 'set_volume', { percent: 30 })
    expect(said).toMatchObject({ ok: true, value: { volume: 30 } })
    expect(f.pending).toEqual([])
    first.gain.write(signal)
    await first.clock.advance(600)
    const want = scaled(signal, 30)
    await until(
      () => played(first.alsa).indexOf(want) >= 0,
      'played(first.alsa).indexOf(want) >= 0',
      60_000,
    )
    // Scaled as a whole: the loudest sample is 30 % of the way down the dB scale, not the source's.
    expect(played(first.alsa).indexOf(signal)).toBe(-1)
    // An alert at 10 % plays at the floor, never quieter.
    first.device.setVolume(10, 'home_assistant')
    first.gain.alerts.write(signal)
    await first.clock.advance(600)
    const floor = scaled(signal, ALERT_FLOOR_PERCENT)
    await until(
      () => played(first.alsa).indexOf(floor) >= 0,
      'played(first.alsa).indexOf(floor) >= 0',
      60_000,
    )
    // "louder" moves it by the nudge.
    await tools.call(f.ctx({ channel: 'voice' }), 'set_volume', { change: 'louder' })
    expect(first.device.volume).toBe(25)
    for (const c of closers.splice(0).reverse()) await c()

    // The power goes; the next start reads the volume back and plays at it.
    const second = boot(path)
    expect(second.device.volume).toBe(25)
    second.gain.write(signal)
    await second.clock.advance(600)
    const again = scaled(signal, 25)
    await until(
      () => played(second.alsa).indexOf(again) >= 0,
      'played(second.alsa).indexOf(again) >= 0',
      60_000,
    )
  })

  it('at 100 % the bytes pass through untouched', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'nocturn-volume-')), 'nocturn.db')
    const b = boot(path)
    b.device.setVolume(100, 'button')
    const signal = ramp()
    b.gain.write(signal)
    await b.clock.advance(600)
    await until(
      () => played(b.alsa).indexOf(signal) >= 0,
      'played(b.alsa).indexOf(signal) >= 0',
      60_000,
    )
  })
})
