import type { LedState } from '../../../ports/panel.js'
import { SENSITIVITIES } from '../../../protocol/sensitivity.js'

/** Home Assistant's discovery prefix unless it was changed in Home Assistant. */
export const DEFAULT_DISCOVERY_PREFIX = 'homeassistant'

/** The states the state sensor takes: every state the device reports (DeviceSnapshot.state). */
const HA_STATES: readonly LedState[] = [
  'idle',
  'listening',
  'speaking',
  'waiting_for_approval',
  'muted',
  'ringing',
  'error',
]

/** Where the device's Home Assistant topics live, below its own protocol base. */
export interface HaTopics {
  /** The retained discovery config: `<prefix>/device/<object id>/config`. */
  readonly config: string
  /** Home Assistant's birth and will: `<prefix>/status`. */
  readonly haStatus: string
  /** The device's state for Home Assistant (retained JSON, nothing personal in it). */
  readonly state: string
  readonly mute: string
  readonly volume: string
  /** The wake word's sensitivity (the select, only when listen.mode is `wake`). */
  readonly sensitivity: string
  readonly stop: string
  /** The timer switch: `OFF` stops a ringing timer. */
  readonly ringing: string
  readonly notify: string
  /** Approval alerts for an automation to send to the companion app (docs/home-assistant.md). */
  readonly alert: string
}

/** Discovery ids allow `[a-zA-Z0-9_-]`; a device id may also hold `.`. */
function objectIdFor(deviceId: string): string {
  return `nocturn_${deviceId.replace(/[^A-Za-z0-9_-]/g, '_')}`
}

export function haTopicsFor(discoveryPrefix: string, base: string, deviceId: string): HaTopics {
  const ha = `${base}/home-assistant`
  return {
    config: `${discoveryPrefix}/device/${objectIdFor(deviceId)}/config`,
    haStatus: `${discoveryPrefix}/status`,
    state: `${ha}/state`,
    mute: `${ha}/set/mute`,
    volume: `${ha}/set/volume`,
    sensitivity: `${ha}/set/sensitivity`,
    stop: `${ha}/set/stop`,
    ringing: `${ha}/set/ringing`,
    notify: `${ha}/notify`,
    alert: `${ha}/alert`,
  }
}

export interface DiscoveryInput {
  readonly deviceId: string
  /** What Home Assistant calls the device ("Nocturn kitchen"). */
  readonly name: string
  /** Nocturn's version, where the caller knows it (shown in the device's page in Home Assistant). */
  readonly version?: string | undefined
  /** The phone app's address: Home Assistant links to it from the device's page. */
  readonly configurationUrl?: string | undefined
  readonly topics: HaTopics
  /** The device's protocol status topic: its last will says "offline" there. */
  readonly statusTopic: string
  /** Whether the wake sensitivity select is in (listen.mode `wake`: a wake word to tune). */
  readonly sensitivity: boolean
}

/**
 * The one device-based discovery config (docs/home-assistant.md): the device, the origin, and its
 * components — mute switch, state sensor, volume number, stop button, pending approvals, the next
 * timer, a timer ringing (a switch that stops it), the false wakes the second opinion caught, the voice service's problem (which provider failed and why), the announcement notify entity and, with a
 * wake word, its sensitivity select. Availability follows the protocol status topic, whose
 * last will the broker publishes when the device vanishes. Abbreviated keys, as Home Assistant
 * documents them; test/mqtt/home-assistant.test.ts checks every key against that list.
 */
export function discoveryConfig(i: DiscoveryInput): Record<string, unknown> {
  const id = objectIdFor(i.deviceId)
  const t = i.topics
  const uid = (c: string) => `${id}_${c}`
  return {
    dev: {
      ids: [id],
      name: i.name,
      mf: 'Nocturn',
      mdl: 'Nocturn speaker',
      ...(i.version !== undefined && { sw: i.version }),
      ...(i.configurationUrl !== undefined && { cu: i.configurationUrl }),
    },
    o: { name: 'Nocturn', ...(i.version !== undefined && { sw: i.version }) },
    avty: [{ t: i.statusTopic, val_tpl: "{{ 'online' if value_json.online else 'offline' }}" }],
    qos: 1,
    cmps: {
      mute: {
        p: 'switch',
        name: 'Mute',
        uniq_id: uid('mute'),
        stat_t: t.state,
        val_tpl: "{{ 'ON' if value_json.muted else 'OFF' }}",
        cmd_t: t.mute,
        ic: 'mdi:microphone-off',
      },
      state: {
        p: 'sensor',
        name: 'State',
        uniq_id: uid('state'),
        stat_t: t.state,
        val_tpl: '{{ value_json.state }}',
        dev_cla: 'enum',
        ops: [...HA_STATES],
      },
      volume: {
        p: 'number',
        name: 'Volume',
        uniq_id: uid('volume'),
        stat_t: t.state,
        val_tpl: '{{ value_json.volume }}',
        cmd_t: t.volume,
        min: 0,
        max: 100,
        step: 1,
        mode: 'slider',
        unit_of_meas: '%',
        ic: 'mdi:volume-high',
      },
      stop: {
        p: 'button',
        name: 'Stop',
        uniq_id: uid('stop'),
        cmd_t: t.stop,
        pl_prs: 'PRESS',
        ic: 'mdi:stop',
      },
      approvals: {
        p: 'sensor',
        name: 'Pending approvals',
        uniq_id: uid('approvals'),
        stat_t: t.state,
        val_tpl: '{{ value_json.pending_approvals }}',
        stat_cla: 'measurement',
        ic: 'mdi:account-clock',
      },
      next_timer: {
        p: 'sensor',
        name: 'Next timer',
        uniq_id: uid('next_timer'),
        stat_t: t.state,
        val_tpl: "{{ value_json.next_timer or 'None' }}",
        dev_cla: 'timestamp',
        ic: 'mdi:timer-outline',
      },
      // A timer ringing shows as on; switched off, it stops ringing (a ring cannot be started
      // from here: only a timer starts one). MQTT discovery has no timer platform.
      timer: {
        p: 'switch',
        name: 'Timer ringing',
        uniq_id: uid('timer'),
        stat_t: t.state,
        val_tpl: "{{ 'ON' if value_json.ringing else 'OFF' }}",
        cmd_t: t.ringing,
        ic: 'mdi:alarm-bell',
      },
      // Counts since the device started; total_increasing takes the restart's drop to 0 as a reset.
      false_wakes: {
        p: 'sensor',
        name: 'False wakes',
        uniq_id: uid('false_wakes'),
        stat_t: t.state,
        val_tpl: '{{ value_json.false_wakes }}',
        stat_cla: 'total_increasing',
        ent_cat: 'diagnostic',
        ic: 'mdi:ear-hearing-off',
      },
      // On while a provider's last attempt failed; which one and why are its attributes.
      voice_service: {
        p: 'binary_sensor',
        name: 'Voice service',
        uniq_id: uid('voice_service'),
        stat_t: t.state,
        val_tpl: "{{ 'ON' if value_json.voice_service.problem else 'OFF' }}",
        dev_cla: 'problem',
        json_attr_t: t.state,
        json_attr_tpl: '{{ value_json.voice_service | tojson }}',
        ent_cat: 'diagnostic',
        ic: 'mdi:cloud-alert',
      },
      announce: {
        p: 'notify',
        name: 'Announce',
        uniq_id: uid('announce'),
        cmd_t: t.notify,
        ic: 'mdi:bullhorn',
      },
      ...(i.sensitivity && {
        sensitivity: {
          p: 'select',
          name: 'Wake sensitivity',
          uniq_id: uid('sensitivity'),
          stat_t: t.state,
          val_tpl: '{{ value_json.sensitivity }}',
          cmd_t: t.sensitivity,
          ops: [...SENSITIVITIES],
          ent_cat: 'config',
          ic: 'mdi:ear-hearing',
        },
      }),
    },
  }
}
