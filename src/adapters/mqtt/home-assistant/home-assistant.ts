import { errorText } from '../../../core/errors.js'
import type { Logger } from '../../../core/logger.js'
import { MAX_ANNOUNCEMENT_CHARS } from '../../../device/announcer.js'
import type { DeviceSnapshot, DeviceState } from '../../../device/device-state.js'
import type { Clock } from '../../../ports/clock.js'
import { isSensitivity } from '../../../protocol/sensitivity.js'
import type { MqttConnection } from '../connection.js'
import { RejectionLog } from '../rejection-log.js'
import { discoveryConfig, type HaTopics } from './discovery.js'
import { ownVersion } from './own-version.js'

export interface HomeAssistantOptions {
  readonly connection: MqttConnection
  readonly device: DeviceState
  /** false: the device removes its discovery config (an empty retained message) and listens to none. */
  readonly discovery: boolean
  readonly topics: HaTopics
  readonly deviceId: string
  readonly name: string
  /** Nocturn's version; its own package's when not given. */
  readonly version?: string | undefined
  /** The phone app's address, linked from the device's page in Home Assistant. */
  readonly configurationUrl?: string | undefined
  readonly statusTopic: string
  /** The wake sensitivity select is offered and obeyed (listen.mode `wake`); otherwise neither. */
  readonly sensitivity: boolean
  /** A sentence from the notify entity, checked and ready to be spoken. */
  readonly announce: (text: string) => void
  readonly logger: Logger
  readonly clock: Clock
}

type Rejection = 'bad_payload' | 'too_long' | 'empty' | 'ring_not_startable'

/**
 * The device in Home Assistant over the household's broker (docs/home-assistant.md): the retained
 * discovery config on every connection and whenever Home Assistant says `online`; the retained
 * state as it changes; and the entities' commands into the DeviceState (mute, volume, stop, and
 * with a wake word its sensitivity) and the announcer (notify). Anything malformed changes nothing
 * and is logged with an `event`. What was heard or said never goes out here.
 */
export class HomeAssistantBridge {
  readonly #o: HomeAssistantOptions
  readonly #log: Logger
  readonly #rejections: RejectionLog<Rejection>
  readonly #unsubscribe: () => void
  #lastState: string | undefined

  constructor(options: HomeAssistantOptions) {
    this.#o = options
    this.#log = options.logger.child({ component: 'home-assistant' })
    this.#rejections = new RejectionLog(this.#log, 'Home Assistant command refused', options.clock)
    const { connection: conn, topics: t } = options
    conn.onConnect(() => {
      if (!options.discovery) {
        this.#remove()
        return
      }
      conn
        .subscribe([
          t.haStatus,
          t.mute,
          t.volume,
          t.stop,
          t.ringing,
          t.notify,
          ...(options.sensitivity ? [t.sensitivity] : []),
        ])
        .catch((err: unknown) =>
          this.#log.warn(
            { event: 'ha_subscribe_failed', err: errorText(err) },
            'Home Assistant topics not subscribed: check the ACL lines in docs/home-assistant.md',
          ),
        )
      this.#lastState = undefined
      this.#publishDiscovery()
      this.#publishState(options.device.snapshot)
    })
    conn.onMessage((topic, payload, retained) => {
      if (options.discovery) this.#onMessage(topic, payload, retained)
    })
    this.#unsubscribe = options.device.subscribe((snapshot) => {
      if (options.discovery) this.#publishState(snapshot)
    })
  }

  /** Stops following the device (the connection's own close says goodbye). */
  close(): void {
    this.#unsubscribe()
    this.#rejections.flush()
  }

  /** Takes the device out of Home Assistant: an empty retained config removes every entity. */
  async uninstall(): Promise<void> {
    await this.#o.connection.publish(this.#o.topics.config, '', { retain: true, qos: 1 })
  }

  #onMessage(topic: string, payload: Buffer, retained: boolean): void {
    const t = this.#o.topics
    const text = payload.toString('utf8')
    if (topic === t.haStatus) {
      if (text === 'online') {
        this.#log.info({}, 'Home Assistant online: discovery re-published')
        this.#lastState = undefined
        this.#publishDiscovery()
        this.#publishState(this.#o.device.snapshot)
      }
      return
    }
    const commands = [t.mute, t.volume, t.stop, t.ringing, t.notify]
    if (this.#o.sensitivity) commands.push(t.sensitivity)
    if (!commands.includes(topic)) return
    // A retained command (someone published one with the flag) would act again at every start.
    if (retained) {
      this.#reject('bad_payload', topic, 'a retained command is ignored')
      return
    }
    const device = this.#o.device
    if (topic === t.mute) {
      if (text === 'ON' || text === 'OFF') device.setMuted(text === 'ON', 'home_assistant')
      else this.#reject('bad_payload', topic, 'mute takes ON or OFF')
    } else if (topic === t.volume) {
      const n = Number(text)
      if (text.trim() !== '' && Number.isFinite(n) && n >= 0 && n <= 100) {
        device.setVolume(n, 'home_assistant')
      } else this.#reject('bad_payload', topic, 'volume takes a number from 0 to 100')
    } else if (topic === t.sensitivity) {
      if (isSensitivity(text)) device.setSensitivity(text, 'home_assistant')
      else this.#reject('bad_payload', topic, 'sensitivity takes low, normal or high')
    } else if (topic === t.stop) {
      if (text === 'PRESS') device.stop('home_assistant')
      else this.#reject('bad_payload', topic, 'stop takes PRESS')
    } else if (topic === t.ringing) {
      // Off stops a ringing timer; a ring is started only by a timer, never from here.
      if (text === 'OFF') {
        if (device.snapshot.ringing.length > 0) device.stop('home_assistant')
      } else if (text === 'ON') {
        this.#reject('ring_not_startable', topic, 'only a timer starts a ring')
      } else this.#reject('bad_payload', topic, 'the timer switch takes OFF')
    } else if (topic === t.notify) {
      const sentence = text.replace(/\s+/g, ' ').trim()
      if (!payload.equals(Buffer.from(text, 'utf8'))) {
        this.#reject('bad_payload', topic, 'an announcement must be UTF-8 text')
      } else if (sentence === '') this.#reject('empty', topic, 'an empty announcement')
      else if ([...sentence].length > MAX_ANNOUNCEMENT_CHARS) {
        this.#reject(
          'too_long',
          topic,
          `an announcement of ${[...sentence].length} characters (at most ${MAX_ANNOUNCEMENT_CHARS})`,
        )
      } else this.#o.announce(sentence)
    }
  }

  #reject(reason: Rejection, topic: string, why: string): void {
    // The payload itself is not logged: an announcement may be personal.
    this.#rejections.add(reason, { event: 'ha_command_rejected', topic, why })
  }

  #publishDiscovery(): void {
    const o = this.#o
    const config = discoveryConfig({
      deviceId: o.deviceId,
      name: o.name,
      version: o.version ?? ownVersion(),
      configurationUrl: o.configurationUrl,
      topics: o.topics,
      statusTopic: o.statusTopic,
      sensitivity: o.sensitivity,
    })
    o.connection
      .publish(o.topics.config, JSON.stringify(config), { retain: true, qos: 1 })
      .catch((err: unknown) =>
        this.#log.warn(
          { event: 'ha_discovery_not_published', err: errorText(err) },
          'Home Assistant discovery not published',
        ),
      )
  }

  #publishState(s: DeviceSnapshot): void {
    if (!this.#o.connection.connected) return
    const body = JSON.stringify({
      state: s.state,
      muted: s.muted,
      volume: s.volume,
      pending_approvals: s.pendingApprovals,
      ringing: s.ringing.length > 0,
      // A timer that rings is no longer the next one: the timers tell the device it rings before
      // they tell it which is next, and for that instant the state said both (issue 44).
      next_timer:
        s.nextTimer && !s.ringing.includes(s.nextTimer.id)
          ? new Date(s.nextTimer.dueAt).toISOString()
          : null,
      false_wakes: s.falseWakes,
      voice_service: voiceService(s),
      ...(this.#o.sensitivity && { sensitivity: s.sensitivity }),
    })
    if (body === this.#lastState) return
    this.#lastState = body
    this.#o.connection
      .publish(this.#o.topics.state, body, { retain: true, qos: 1 })
      .catch((err: unknown) =>
        this.#log.warn(
          { event: 'ha_state_not_published', err: errorText(err) },
          'Home Assistant state not published',
        ),
      )
  }

  #remove(): void {
    this.uninstall().catch((err: unknown) =>
      this.#log.debug({ err: errorText(err) }, 'Home Assistant discovery not removed'),
    )
  }
}

/**
 * The Voice service problem sensor's state and attributes: a problem while a provider's last
 * attempt failed — the first such provider, its reason and its words — with every provider's word.
 */
function voiceService(s: DeviceSnapshot): Record<string, unknown> {
  const failing = s.providers.find((p) => !p.ok)
  return {
    problem: failing !== undefined,
    ...(failing && { provider: failing.provider, reason: failing.reason, detail: failing.detail }),
    providers: Object.fromEntries(s.providers.map((p) => [p.provider, p.ok ? 'ok' : p.reason])),
  }
}
