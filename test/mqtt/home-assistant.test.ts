import { readFileSync } from 'node:fs'
import mqtt from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { MAX_ANNOUNCEMENT_CHARS } from '../../src/device/announcer.js'
import { DeviceState } from '../../src/device/device-state.js'
import { ProviderHealthListener } from '../../src/device/provider-health.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { TimerService } from '../../src/tools/timer-service.js'
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

/**
 * Every key the config may carry, written from Home Assistant's MQTT documentation and its
 * abbreviation list (homeassistant/components/mqtt/abbreviations.py, schemas.py): abbreviation →
 * full name. At the top level an unknown key makes Home Assistant drop the whole device; inside a
 * component it is silently removed — either way a typo would do nothing, so every key is checked.
 */
const TOP: Record<string, string> = {
  dev: 'device',
  o: 'origin',
  cmps: 'components',
  avty: 'availability',
  avty_mode: 'availability_mode',
  avty_t: 'availability_topic',
  avty_tpl: 'availability_template',
  pl_avail: 'payload_available',
  pl_not_avail: 'payload_not_available',
  stat_t: 'state_topic',
  cmd_t: 'command_topic',
  qos: 'qos',
  e: 'encoding',
}
const DEVICE: Record<string, string> = {
  ids: 'identifiers',
  cns: 'connections',
  name: 'name',
  mf: 'manufacturer',
  mdl: 'model',
  mdl_id: 'model_id',
  hw: 'hw_version',
  sw: 'sw_version',
  sn: 'serial_number',
  sa: 'suggested_area',
  cu: 'configuration_url',
  via_device: 'via_device',
}
const ORIGIN: Record<string, string> = { name: 'name', sw: 'sw_version', url: 'support_url' }
const AVAILABILITY: Record<string, string> = {
  t: 'topic',
  pl_avail: 'payload_available',
  pl_not_avail: 'payload_not_available',
  val_tpl: 'value_template',
}
/** Keys every entity platform takes (MQTT_ENTITY_COMMON_SCHEMA) plus `p`, the platform. */
const COMMON: Record<string, string> = {
  p: 'platform',
  name: 'name',
  uniq_id: 'unique_id',
  obj_id: 'object_id',
  ic: 'icon',
  ent_cat: 'entity_category',
  en: 'enabled_by_default',
  json_attr_t: 'json_attributes_topic',
  json_attr_tpl: 'json_attributes_template',
  avty: 'availability',
  avty_t: 'availability_topic',
  qos: 'qos',
}
const PLATFORM: Record<string, { keys: Record<string, string>; required: string[] }> = {
  switch: {
    keys: {
      cmd_t: 'command_topic',
      stat_t: 'state_topic',
      val_tpl: 'value_template',
      pl_on: 'payload_on',
      pl_off: 'payload_off',
      stat_on: 'state_on',
      stat_off: 'state_off',
      opt: 'optimistic',
      ret: 'retain',
      dev_cla: 'device_class',
    },
    required: ['cmd_t'],
  },
  sensor: {
    keys: {
      stat_t: 'state_topic',
      val_tpl: 'value_template',
      dev_cla: 'device_class',
      stat_cla: 'state_class',
      unit_of_meas: 'unit_of_measurement',
      ops: 'options',
      exp_aft: 'expire_after',
      frc_upd: 'force_update',
    },
    required: ['stat_t'],
  },
  number: {
    keys: {
      cmd_t: 'command_topic',
      cmd_tpl: 'command_template',
      stat_t: 'state_topic',
      val_tpl: 'value_template',
      min: 'min',
      max: 'max',
      step: 'step',
      mode: 'mode',
      unit_of_meas: 'unit_of_measurement',
      dev_cla: 'device_class',
      opt: 'optimistic',
      ret: 'retain',
    },
    required: ['cmd_t'],
  },
  button: {
    keys: {
      cmd_t: 'command_topic',
      cmd_tpl: 'command_template',
      pl_prs: 'payload_press',
      dev_cla: 'device_class',
      ret: 'retain',
    },
    required: ['cmd_t'],
  },
  notify: {
    keys: { cmd_t: 'command_topic', cmd_tpl: 'command_template', ret: 'retain' },
    required: ['cmd_t'],
  },
  binary_sensor: {
    keys: {
      stat_t: 'state_topic',
      val_tpl: 'value_template',
      dev_cla: 'device_class',
      pl_on: 'payload_on',
      pl_off: 'payload_off',
      exp_aft: 'expire_after',
      frc_upd: 'force_update',
      off_dly: 'off_delay',
    },
    required: ['stat_t'],
  },
  select: {
    keys: {
      cmd_t: 'command_topic',
      cmd_tpl: 'command_template',
      stat_t: 'state_topic',
      val_tpl: 'value_template',
      ops: 'options',
      opt: 'optimistic',
      ret: 'retain',
    },
    required: ['cmd_t', 'ops'],
  },
}

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
).version

const skip = missingCommands('mosquitto', 'mosquitto_passwd')
const DEVICE_ID = 'kitchen'
const BASE = `${PREFIX}/${DEVICE_ID}`
const CONFIG = 'homeassistant/device/nocturn_kitchen/config'
const T = {
  state: `${BASE}/home-assistant/state`,
  mute: `${BASE}/home-assistant/set/mute`,
  volume: `${BASE}/home-assistant/set/volume`,
  sensitivity: `${BASE}/home-assistant/set/sensitivity`,
  stop: `${BASE}/home-assistant/set/stop`,
  ringing: `${BASE}/home-assistant/set/ringing`,
  notify: `${BASE}/home-assistant/notify`,
  status: `${BASE}/status`,
}

interface Heard {
  readonly topic: string
  readonly text: string
  readonly retain: boolean
}

async function client(user: { username: string; password: string }, url: string) {
  const c = await mqtt.connectAsync(url, { ...user, reconnectPeriod: 0, connectTimeout: 3000 })
  const heard: Heard[] = []
  c.on('message', (topic, payload, packet) =>
    heard.push({ topic, text: payload.toString(), retain: packet.retain }),
  )
  return { c, heard }
}

function last(heard: Heard[], topic: string): Heard | undefined {
  return heard.filter((h) => h.topic === topic).at(-1)
}

function checkKeys(where: string, obj: Record<string, unknown>, table: Record<string, string>) {
  for (const k of Object.keys(obj)) {
    expect(table, `${where}: "${k}" is not a key Home Assistant documents here`).toHaveProperty(k)
  }
}

describe.skipIf(skip)('Home Assistant over the real Mosquitto with the documented ACL', () => {
  let broker: TestBroker
  const logs = new MemoryLogger()
  const device = new DeviceState()
  const stops: string[] = []
  device.onStop((c) => stops.push(c.source))
  const announced: string[] = []
  let dev: ReturnType<typeof testDeviceMqtt>
  let ha: Awaited<ReturnType<typeof client>>

  beforeAll(async () => {
    broker = mosquittoBroker(await freePort(), { extraAcl: [homeAssistantAcl()] })
    await broker.start()
    ha = await client(USERS.homeAssistant, broker.url)
    await ha.c.subscribeAsync(['homeassistant/device/+/config', T.state, T.status], { qos: 1 })
    dev = testDeviceMqtt(broker.url, DEVICE_ID, () => new Map(), {
      logger: logs,
      device,
      homeAssistant: {
        discovery: true,
        // No version given: the device says its own (package.json's).
        configurationUrl: 'http://kitchen.local:8080/',
        sensitivity: true,
        announce: (text) => announced.push(text),
      },
    })
    await dev.connection.ready()
  })

  afterAll(async () => {
    await ha?.c.endAsync()
    await dev?.close()
    await broker?.stop()
  })

  it('publishes one retained device config whose every key Home Assistant documents', async () => {
    await until(() => last(ha.heard, CONFIG) !== undefined, 'the discovery config')
    const config = JSON.parse(last(ha.heard, CONFIG)?.text ?? '{}') as Record<string, unknown>
    checkKeys('top level', config, TOP)
    expect(Object.keys(config).sort()).toEqual(['avty', 'cmps', 'dev', 'o', 'qos'])
    expect('avty' in config && 'avty_t' in config).toBe(false) // exclusive
    const devInfo = config.dev as Record<string, unknown>
    checkKeys('dev', devInfo, DEVICE)
    expect(devInfo.ids).toEqual(['nocturn_kitchen'])
    // Issue 44: a speaker with its software version and a link to its phone app.
    expect(devInfo.sw).toBe(VERSION)
    expect(devInfo.cu).toBe('http://kitchen.local:8080/')
    const origin = config.o as Record<string, unknown>
    checkKeys('o', origin, ORIGIN)
    expect(origin.name).toBe('Nocturn')
    const avty = config.avty as Record<string, unknown>[]
    for (const a of avty) checkKeys('avty', a, AVAILABILITY)
    // Availability is the protocol status topic, which the last will sets offline.
    expect(avty).toEqual([{ t: T.status, val_tpl: expect.stringContaining('value_json.online') }])

    const cmps = config.cmps as Record<string, Record<string, unknown>>
    const platforms = Object.fromEntries(Object.entries(cmps).map(([k, c]) => [k, c.p]))
    expect(platforms).toEqual({
      mute: 'switch',
      state: 'sensor',
      volume: 'number',
      stop: 'button',
      approvals: 'sensor',
      next_timer: 'sensor',
      timer: 'switch',
      false_wakes: 'sensor',
      voice_service: 'binary_sensor',
      announce: 'notify',
      sensitivity: 'select',
    })
    const ids = new Set<unknown>()
    for (const [name, c] of Object.entries(cmps)) {
      const platform = PLATFORM[c.p as string]
      expect(platform, `${name}: platform ${String(c.p)}`).toBeDefined()
      checkKeys(`cmps.${name}`, c, { ...COMMON, ...platform?.keys })
      for (const k of platform?.required ?? []) expect(c, `${name} needs ${k}`).toHaveProperty(k)
      expect(typeof c.uniq_id, `${name}: unique_id`).toBe('string')
      ids.add(c.uniq_id)
      if (typeof c.cmd_t === 'string') expect(c.cmd_t).not.toMatch(/[+#]/)
      if (c.stat_t !== undefined) expect(c.stat_t).toBe(T.state)
    }
    expect(ids.size).toBe(Object.keys(cmps).length)
    // Per-platform rules: an enum with its options and no unit or class; a 0–100 number.
    expect(cmps.state).toMatchObject({ dev_cla: 'enum' })
    expect(cmps.state?.ops).toEqual(
      expect.arrayContaining(['idle', 'listening', 'speaking', 'waiting_for_approval', 'muted']),
    )
    expect(cmps.state).not.toHaveProperty('stat_cla')
    expect(cmps.state).not.toHaveProperty('unit_of_meas')
    expect(cmps.volume).toMatchObject({ min: 0, max: 100, mode: 'slider' })
    expect(cmps.next_timer).toMatchObject({ dev_cla: 'timestamp' })
    expect(cmps.voice_service).toMatchObject({ dev_cla: 'problem', json_attr_t: T.state })
    expect(cmps.sensitivity).toMatchObject({
      ops: ['low', 'normal', 'high'],
      cmd_t: T.sensitivity,
      ent_cat: 'config',
    })
    // Each template reads a key the state message carries.
    await until(() => last(ha.heard, T.state) !== undefined, 'the state')
    const state = JSON.parse(last(ha.heard, T.state)?.text ?? '{}') as Record<string, unknown>
    for (const c of Object.values(cmps)) {
      for (const m of String(c.val_tpl ?? '').matchAll(/value_json\.(\w+)/g)) {
        expect(state).toHaveProperty(m[1] as string)
      }
    }
    // Retained, so a Home Assistant that starts later finds it.
    const late = await client(USERS.homeAssistant, broker.url)
    await late.c.subscribeAsync(CONFIG, { qos: 1 })
    await until(() => late.heard.length > 0, 'the retained config')
    expect(late.heard[0]?.retain).toBe(true)
    await late.c.endAsync()
  })

  it('the state comes back for each command from the entities: mute, volume, stop, notify, sensitivity', async () => {
    await until(() => last(ha.heard, T.state) !== undefined, 'the state')
    expect(JSON.parse(last(ha.heard, T.state)?.text ?? '')).toEqual({
      state: 'idle',
      muted: false,
      volume: 100,
      pending_approvals: 0,
      ringing: false,
      next_timer: null,
      false_wakes: 0,
      voice_service: { problem: false, providers: {} },
      sensitivity: 'normal',
    })
    await ha.c.publishAsync(T.mute, 'ON', { qos: 1 })
    await until(() => device.muted, 'mute')
    await until(() => JSON.parse(last(ha.heard, T.state)?.text ?? '{}').muted === true, 'muted')
    expect(JSON.parse(last(ha.heard, T.state)?.text ?? '{}').state).toBe('muted')
    await ha.c.publishAsync(T.volume, '35', { qos: 1 })
    await until(() => JSON.parse(last(ha.heard, T.state)?.text ?? '{}').volume === 35, 'volume')
    expect(device.volume).toBe(35)
    await ha.c.publishAsync(T.stop, 'PRESS', { qos: 1 })
    await until(() => stops.length === 1, 'stop')
    expect(stops).toEqual(['home_assistant'])
    await ha.c.publishAsync(T.notify, '  The washing\n is done. ', { qos: 1 })
    await until(() => announced.length === 1, 'the announcement')
    expect(announced).toEqual(['The washing is done.'])
    await ha.c.publishAsync(T.sensitivity, 'high', { qos: 1 })
    await until(
      () => JSON.parse(last(ha.heard, T.state)?.text ?? '{}').sensitivity === 'high',
      'sensitivity',
    )
    expect(device.sensitivity).toBe('high')
    await ha.c.publishAsync(T.mute, 'OFF', { qos: 1 })
    await until(() => !device.muted, 'unmute')
    // Nothing personal is retained: the state holds no text that was heard or said.
    expect(last(ha.heard, T.state)?.text).not.toContain('washing')
  })

  it('a false wake the second opinion caught is counted in the state Home Assistant reads', async () => {
    device.countFalseWake()
    await until(
      () => JSON.parse(last(ha.heard, T.state)?.text ?? '{}').false_wakes === 1,
      'the false wake counted',
    )
  })

  it('the Voice service problem sensor: which provider failed and why while one fails, cleared when it is reached again', async () => {
    const voice = () =>
      JSON.parse(last(ha.heard, T.state)?.text ?? '{}').voice_service as Record<string, unknown>
    const listener = new ProviderHealthListener(device)
    listener.unreachable([
      { provider: 'gemini', reason: 'key_refused', detail: 'API key not valid' },
      { provider: 'openai', reason: 'offline', detail: 'getaddrinfo ENOTFOUND' },
    ])
    await until(() => voice().problem === true, 'the problem reported')
    expect(voice()).toEqual({
      problem: true,
      provider: 'gemini',
      reason: 'key_refused',
      detail: 'API key not valid',
      providers: { gemini: 'key_refused', openai: 'offline' },
    })
    // The device's state is `error` meanwhile (the LED's error pattern), with the reason.
    expect(JSON.parse(last(ha.heard, T.state)?.text ?? '{}').state).toBe('error')
    listener.reached('gemini')
    await until(() => voice().provider === 'openai', 'gemini cleared')
    expect(JSON.parse(last(ha.heard, T.state)?.text ?? '{}').state).not.toBe('error')
    listener.reached('openai')
    await until(() => voice().problem === false, 'the problem cleared')
    expect(voice()).toEqual({ problem: false, providers: { gemini: 'ok', openai: 'ok' } })
  })

  it('malformed commands change nothing and are logged with an event', async () => {
    const before = logs.records.filter((r) => r.fields.event === 'ha_command_rejected').length
    await ha.c.publishAsync(T.mute, 'maybe', { qos: 1 })
    await ha.c.publishAsync(T.volume, 'loud', { qos: 1 })
    await ha.c.publishAsync(T.volume, '150', { qos: 1 })
    await ha.c.publishAsync(T.stop, 'please', { qos: 1 })
    await ha.c.publishAsync(T.notify, 'x'.repeat(MAX_ANNOUNCEMENT_CHARS + 1), { qos: 1 })
    await ha.c.publishAsync(T.notify, '   ', { qos: 1 })
    await ha.c.publishAsync(T.notify, Buffer.from([0xff, 0xfe, 0x41]), { qos: 1 })
    await until(
      () =>
        logs.records.filter((r) => r.fields.event === 'ha_command_rejected').length >= before + 7,
      'seven rejections',
    )
    const lines = logs.records.filter((r) => r.fields.event === 'ha_command_rejected')
    expect(lines.every((r) => r.level === 'warn')).toBe(true)
    expect(lines.map((r) => r.fields.topic)).toContain(T.notify)
    // The announcement's text is never logged.
    expect(JSON.stringify(logs.records)).not.toContain('xxxxxxxx')
    expect(device.muted).toBe(false)
    expect(device.volume).toBe(35)
    // A malformed sensitivity: test/device/wake-sensitivity.test.ts (a sixth bad payload here
    // would fall into the rejection log's summary).
    expect(stops).toHaveLength(1)
    expect(announced).toHaveLength(1)
  })

  it('a ringing timer: its switch shows it ringing and switched off stops it; no state says it rings and is still to come', async () => {
    const timers = new TimerService({
      store: new SqliteStore(':memory:'),
      clock: realClock(),
      sink: { sampleRateHz: 24_000, write: () => {} },
      logger: logs,
      device,
      repeatMs: 100,
    })
    timers.start()
    const from = ha.heard.length
    const t = timers.add('timer', Date.now() + 300, null)
    const due = new Date(t.dueAt).toISOString()
    const states = () =>
      ha.heard
        .slice(from)
        .filter((h) => h.topic === T.state)
        .map((h) => JSON.parse(h.text) as { state: string; ringing: boolean; next_timer: unknown })
    await until(() => states().some((s) => s.ringing), 'the timer ringing')
    await ha.c.publishAsync(T.ringing, 'ON', { qos: 1 })
    await ha.c.publishAsync(T.ringing, 'OFF', { qos: 1 })
    await until(() => timers.ringing().length === 0, 'the ring stopped')
    await until(() => states().at(-1)?.ringing === false, 'the state not ringing')
    timers.close()
    const seen = states()
    expect(seen.map((s) => [s.ringing, s.next_timer === null ? 'none' : 'next'])).toEqual([
      [false, 'next'],
      [true, 'none'],
      [false, 'none'],
    ])
    // Every message agrees with itself: ringing is the state, and a ringing timer is not "next".
    for (const s of seen) {
      expect(s.ringing).toBe(s.state === 'ringing')
      if (s.ringing) expect(s.next_timer).not.toBe(due)
    }
    // ON is refused (only a timer starts a ring) and logged with its event.
    expect(logs.records).toContainEqual(
      expect.objectContaining({
        fields: expect.objectContaining({ event: 'ha_command_rejected', topic: T.ringing }),
      }),
    )
  })

  it('a client the ACL does not allow reaches nothing', async () => {
    const anna = await client(USERS.anna, broker.url)
    await anna.c.publishAsync(T.mute, 'ON', { qos: 1 })
    await anna.c.publishAsync(T.notify, 'Open the door.', { qos: 1 })
    await anna.c.publishAsync(T.volume, '100', { qos: 1 })
    await anna.c.publishAsync(T.sensitivity, 'low', { qos: 1 })
    // Home Assistant's next command arrives: the refused ones, sent before it, never did.
    await ha.c.publishAsync(T.volume, '40', { qos: 1 })
    await until(() => device.volume === 40, 'volume 40')
    expect(device.muted).toBe(false)
    expect(device.sensitivity).toBe('high')
    expect(announced).toHaveLength(1)
    await anna.c.endAsync()
  })

  it('re-publishes the config when Home Assistant says it is online', async () => {
    const n = ha.heard.filter((h) => h.topic === CONFIG).length
    await ha.c.publishAsync('homeassistant/status', 'online', { qos: 1 })
    await until(
      () => ha.heard.filter((h) => h.topic === CONFIG).length > n,
      'a re-published config',
    )
    await ha.c.publishAsync('homeassistant/status', 'offline', { qos: 1 })
    await new Promise((r) => setTimeout(r, 200))
    expect(ha.heard.filter((h) => h.topic === CONFIG).length).toBe(n + 1)
  })

  it('a retained command (it would act again at every start) is refused and logged', async () => {
    // Another speaker in the house, so the two connections do not take each other's client id.
    const hallMute = `${PREFIX}/hall/home-assistant/set/mute`
    await ha.c.publishAsync(hallMute, 'ON', { qos: 1, retain: true })
    const other = new DeviceState()
    const otherLogs = new MemoryLogger()
    const second = testDeviceMqtt(broker.url, 'hall', () => new Map(), {
      logger: otherLogs,
      device: other,
      homeAssistant: { discovery: true, version: '0.1.0', announce: () => {} },
    })
    try {
      await until(
        () => otherLogs.records.some((r) => r.fields.event === 'ha_command_rejected'),
        'the refusal of the retained command',
      )
      expect(other.muted).toBe(false)
    } finally {
      await ha.c.publishAsync(hallMute, '', { qos: 1, retain: true })
      await second.close()
    }
  })

  it('availability: the last will says offline when the device vanishes', async () => {
    await dev.connection.close({ force: true })
    await until(
      () => JSON.parse(last(ha.heard, T.status)?.text ?? '{}').online === false,
      'the will',
    )
    expect(last(ha.heard, T.status)?.retain).toBe(false) // delivered live to a subscriber
  })

  it('discovery turned off: the config is removed with an empty retained message', async () => {
    const off = testDeviceMqtt(broker.url, DEVICE_ID, () => new Map(), {
      device,
      homeAssistant: { discovery: false, version: '0.1.0', announce: () => {} },
    })
    await off.connection.ready()
    await until(() => last(ha.heard, CONFIG)?.text === '', 'the removal')
    const late = await client(USERS.homeAssistant, broker.url)
    await late.c.subscribeAsync(CONFIG, { qos: 1 })
    await new Promise((r) => setTimeout(r, 300))
    expect(late.heard).toEqual([]) // nothing retained any more: Home Assistant forgets the device
    // And it listens to no command.
    await ha.c.publishAsync(T.mute, 'ON', { qos: 1 })
    await new Promise((r) => setTimeout(r, 200))
    expect(device.muted).toBe(false)
    await late.c.endAsync()
    await off.close()
  })
})
