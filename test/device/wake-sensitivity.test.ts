import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import type { OpenWakeWordDetector } from '../../src/adapters/openwakeword/detector.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { wakeSchema } from '../../src/app/config/wake-schema.js'
import {
  createWakeDetector,
  followSensitivity,
  wakeModelPaths,
  wakeThresholds,
} from '../../src/app/wake-detector.js'
import { silentLogger } from '../../src/core/logger.js'
import { DeviceState } from '../../src/device/device-state.js'
import { remember, remembered, SENSITIVITY } from '../../src/device/remembered-settings.js'
import type { WakeDetection } from '../../src/ports/wake-word.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import {
  freePort,
  homeAssistantAcl,
  mosquittoBroker,
  PREFIX,
  type TestBroker,
  USERS,
} from '../helpers/brokers.js'
import { testDeviceMqtt } from '../helpers/device-mqtt.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { HEADS, MODEL_DIR, wavPcm } from '../helpers/wake.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
const DEVICE_ID = 'study'
const SET = `${PREFIX}/${DEVICE_ID}/home-assistant/set/sensitivity`
const STATE = `${PREFIX}/${DEVICE_ID}/home-assistant/state`
const JARVIS = HEADS.find((h) => h.name === 'hey_jarvis')
/** hey_jarvis alone, at the default threshold (0.5): low is 0.9, high 0.3 (docs/wake-word.md). */
const WAKE = wakeSchema.parse({ models: [{ model: JARVIS?.file }], modelDir: MODEL_DIR })

/**
 * The hey_jarvis clip under white noise 3 dB below it: the head holds ~0.63 on it for two chunks
 * (printed), and 0.42 on the windows 40 ms off them (the detector's second phase) — above
 * normal's 0.5 and high's 0.3, below low's 0.9. (At 4 dB below, the chunks held 0.80 but the
 * second phase 0.96, which low's 0.9 lets through.) Seeded, so the same every run.
 */
function noisyJarvis(): Uint8Array {
  const pcm = wavPcm(JARVIS?.clip ?? '')
  const src = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength))
  let seed = 1
  const noise = Float64Array.from(src, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff - 0.5
  })
  const power = (x: ArrayLike<number>) => {
    let s = 0
    for (let i = 0; i < x.length; i++) s += (x[i] ?? 0) ** 2
    return s / x.length
  }
  const gain = Math.sqrt(power(src) / (power(noise) * 10 ** (3 / 10)))
  const out = Int16Array.from(src, (v, i) =>
    Math.max(-32768, Math.min(32767, Math.round(v + gain * (noise[i] ?? 0)))),
  )
  return new Uint8Array(out.buffer)
}

/** One boot: the store, the device state restored from it, the real detector following it. */
async function boot(path: string) {
  const store = new SqliteStore(path)
  const device = new DeviceState({ sensitivity: remembered(SENSITIVITY, store, silentLogger) })
  remember(SENSITIVITY, device, store, realClock(), silentLogger)
  const wakes: WakeDetection[] = []
  const held: number[] = []
  const detector: OpenWakeWordDetector = await createWakeDetector(WAKE, {
    onWake: (w) => wakes.push(w),
    logger: silentLogger,
    sensitivity: device.sensitivity,
    onScores: (s) => held.push(s[0] ?? 0),
  })
  const logs = new MemoryLogger()
  followSensitivity(device, detector, WAKE, logs)
  let at = 0
  /** How many times the detector fires on the clip, heard afresh (past the refractory time). */
  const fires = async (pcm: Uint8Array) => {
    detector.reset()
    wakes.length = 0
    held.length = 0
    at = (await detector.scoreRecorded(pcm, at)) + 10_000
    return wakes.length
  }
  return { store, device, detector, fires, held, logs }
}

describe.skipIf(skip)('the wake sensitivity, from Home Assistant to the real detector', () => {
  let broker: TestBroker
  let ha: mqtt.MqttClient
  const heard: { topic: string; text: string }[] = []
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-sensitivity-'))
  const clip = noisyJarvis()

  beforeAll(async () => {
    broker = mosquittoBroker(await freePort(), { extraAcl: [homeAssistantAcl()] })
    await broker.start()
    ha = await mqtt.connectAsync(broker.url, { ...USERS.homeAssistant, reconnectPeriod: 0 })
    ha.on('message', (topic, payload) => heard.push({ topic, text: payload.toString() }))
    await ha.subscribeAsync(STATE, { qos: 1 })
  })

  afterAll(async () => {
    await ha?.endAsync()
    await broker?.stop()
  })

  const stateSays = (s: string) => () =>
    heard.some((h) => h.topic === STATE && JSON.parse(h.text).sensitivity === s)

  it('a changed sensitivity changes what the detector fires on, without reloading it, and a restart keeps it', async () => {
    const path = join(dir, 'store.db')
    const first = await boot(path)
    const logs = new MemoryLogger()
    const dev = testDeviceMqtt(broker.url, DEVICE_ID, () => new Map(), {
      logger: logs,
      device: first.device,
      homeAssistant: {
        discovery: true,
        sensitivity: true,
        announce: () => {},
      },
    })
    try {
      await dev.connection.ready()
      await until(stateSays('normal'), 'the state at normal')
      // normal: the configured 0.5 — the noisy phrase wakes it.
      expect(await first.fires(clip)).toBe(1)
      let top = 0
      for (let c = 1; c < first.held.length; c++) {
        top = Math.max(top, Math.min(first.held[c - 1] ?? 0, first.held[c] ?? 0))
      }
      process.stdout.write(`noisy hey_jarvis holds ${top.toFixed(3)} for two chunks\n`)
      expect(top).toBeGreaterThan(wakeThresholds(wakeModelPaths(WAKE).phrases, 'normal')[0] ?? 1)
      expect(top).toBeLessThan(wakeThresholds(wakeModelPaths(WAKE).phrases, 'low')[0] ?? 0)

      await ha.publishAsync(SET, 'low', { qos: 1 })
      await until(stateSays('low'), 'the state at low')
      expect(first.device.sensitivity).toBe('low')
      expect(await first.fires(clip)).toBe(0)
      // The same clip, the same loaded detector: only its threshold moved.
      expect(first.logs.records.at(-1)?.fields).toMatchObject({
        sensitivity: 'low',
        thresholds: [wakeThresholds(wakeModelPaths(WAKE).phrases, 'low')[0]],
      })

      await ha.publishAsync(SET, 'high', { qos: 1 })
      await until(stateSays('high'), 'the state at high')
      expect(await first.fires(clip)).toBe(1)

      // Malformed: nothing changes, and each is logged with an event.
      const before = logs.records.filter((r) => r.fields.event === 'ha_command_rejected').length
      for (const bad of ['HIGH', 'max', '', '0.3']) await ha.publishAsync(SET, bad, { qos: 1 })
      await until(
        () =>
          logs.records.filter((r) => r.fields.event === 'ha_command_rejected').length >= before + 4,
        'four rejections',
      )
      expect(first.device.sensitivity).toBe('high')

      // A client the ACL refuses never reaches the device: Home Assistant's next command does.
      const anna = await mqtt.connectAsync(broker.url, { ...USERS.anna, reconnectPeriod: 0 })
      await anna.publishAsync(SET, 'normal', { qos: 1 })
      await anna.endAsync()
      await ha.publishAsync(SET, 'low', { qos: 1 })
      await until(() => first.device.sensitivity === 'low', 'low from Home Assistant')
      expect(first.logs.records.map((r) => r.fields.sensitivity)).toEqual(['low', 'high', 'low'])
    } finally {
      await dev.close()
      await first.detector.close()
      first.store.close()
    }

    // The next start: the store remembers low, and the new detector starts at its threshold.
    const second = await boot(path)
    try {
      expect(second.device.sensitivity).toBe('low')
      expect(await second.fires(clip)).toBe(0)
      second.device.setSensitivity('normal', 'home_assistant')
      expect(await second.fires(clip)).toBe(1)
    } finally {
      await second.detector.close()
      second.store.close()
    }
  }, 120_000)

  it('outside wake mode there is no select, and its topic is not obeyed', async () => {
    const device = new DeviceState()
    const configs: string[] = []
    const watch = await mqtt.connectAsync(broker.url, {
      ...USERS.homeAssistant,
      reconnectPeriod: 0,
    })
    watch.on('message', (_t, p) => configs.push(p.toString()))
    await watch.subscribeAsync('homeassistant/device/nocturn_porch/config', { qos: 1 })
    const logs = new MemoryLogger()
    const dev = testDeviceMqtt(broker.url, 'porch', () => new Map(), {
      logger: logs,
      device,
      homeAssistant: { discovery: true, announce: () => {} },
    })
    try {
      await dev.connection.ready()
      await until(() => configs.length > 0, 'the discovery config')
      const config = JSON.parse(configs.at(-1) ?? '{}') as { cmps: Record<string, unknown> }
      expect(Object.keys(config.cmps)).not.toContain('sensitivity')
      await watch.publishAsync(`${PREFIX}/porch/home-assistant/set/sensitivity`, 'high', { qos: 1 })
      // A command it does obey, sent after, arrives: the sensitivity one was not acted on.
      await watch.publishAsync(`${PREFIX}/porch/home-assistant/set/volume`, '30', { qos: 1 })
      await until(() => device.volume === 30, 'the volume')
      expect(device.sensitivity).toBe('normal')
    } finally {
      await dev.close()
      await watch.endAsync()
    }
  })
})
