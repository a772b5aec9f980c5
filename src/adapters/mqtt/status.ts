import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock, TimerHandle } from '../../ports/clock.js'
import { PROTOCOL_VERSION, type StatusMessage } from '../../protocol/index.js'
import type { Sensitivity } from '../../protocol/sensitivity.js'
import type { MqttConnection } from './connection.js'

/** The last will: what the broker publishes on the status topic if the device vanishes. */
export function offlineStatus(model: string | null): StatusMessage {
  return { v: PROTOCOL_VERSION, online: false, state: 'offline', muted: null, model, since: null }
}

/**
 * Refusals come in floods (a forged decision a millisecond): the status carries their counts at
 * most this often, not once per refusal.
 */
const REFUSALS_EVERY_MS = 1000

/**
 * The retained status topic: online, the driver's state and mute, mirrored as they change and
 * re-published on every reconnection (the broker may have restarted without its retained store).
 */
export class MqttStatus {
  readonly #conn: MqttConnection
  readonly #topic: string
  readonly #model: string | null
  readonly #log: Logger
  readonly #clock: Clock
  #state = 'idle'
  #muted = false
  #reason: string | undefined
  #falseWakes = 0
  #volume: number | undefined
  #sensitivity: Sensitivity | undefined
  #refused: StatusMessage['refused']
  #providers: StatusMessage['providers']
  #wakeCheck: StatusMessage['wakeCheck']
  #refusedText = ''
  #refusedTimer: TimerHandle | undefined
  #since: number
  /** This connection's subscriptions are answered: "online" may be said (see the constructor). */
  #heard = false
  #connections = 0

  constructor(options: {
    connection: MqttConnection
    topic: string
    model: string | null
    logger: Logger
    clock: Clock
  }) {
    this.#conn = options.connection
    this.#topic = options.topic
    this.#model = options.model
    this.#log = options.logger.child({ component: 'mqtt-status' })
    this.#clock = options.clock
    this.#since = this.#clock.now()
    // "online" says a phone can be heard: only once this connection's subscriptions (approvals,
    // conversation requests, made by the other onConnect handlers, which run in the same turn) are
    // in place — a phone that acted on an earlier "online" had its first request lost.
    this.#conn.onConnect(() => {
      this.#heard = false
      const connection = ++this.#connections
      queueMicrotask(
        () =>
          void this.#conn.subscriptionsSettled().then(() => {
            // Lost meanwhile: the next connection says it.
            if (connection !== this.#connections || !this.#conn.connected) return
            this.#heard = true
            this.#publish()
          }),
      )
    })
    this.#conn.onDisconnect(() => {
      this.#heard = false
    })
  }

  /**
   * Called whenever the device's state, mute or false-wake count changes. `reason` says why the
   * state is `error` (the microphone hears nothing, the store cannot be written), and is absent
   * otherwise. `since` moves only when the state or mute does.
   */
  setState(state: string, muted: boolean, reason?: string, falseWakes = this.#falseWakes): void {
    const moved = state !== this.#state || muted !== this.#muted || reason !== this.#reason
    if (!moved && falseWakes === this.#falseWakes) return
    this.#state = state
    this.#muted = muted
    this.#reason = reason
    this.#falseWakes = falseWakes
    if (moved) this.#since = this.#clock.now()
    this.#publish()
  }

  /** The speaker's volume changed (0–100 %): the status carries it from now on. */
  setVolume(volume: number): void {
    if (volume === this.#volume) return
    this.#volume = volume
    this.#publish()
  }

  /** The wake word's sensitivity changed; undefined: the speaker listens without a wake word. */
  setSensitivity(sensitivity: Sensitivity | undefined): void {
    if (sensitivity === this.#sensitivity) return
    this.#sensitivity = sensitivity
    this.#publish()
  }

  /** A provider's health changed (each one's last attempt): the status carries them all. */
  setProviders(providers: Readonly<NonNullable<StatusMessage['providers']>>): void {
    const next = providers.length > 0 ? providers.map((p) => ({ ...p })) : undefined
    if (JSON.stringify(next) === JSON.stringify(this.#providers)) return
    this.#providers = next
    this.#publish()
  }

  /** The local wake check's state changed; undefined: the speaker has no wake word. */
  setWakeCheck(wakeCheck: StatusMessage['wakeCheck']): void {
    if (JSON.stringify(wakeCheck) === JSON.stringify(this.#wakeCheck)) return
    this.#wakeCheck = wakeCheck && { ...wakeCheck }
    this.#publish()
  }

  /** The refused input's counts changed: published within REFUSALS_EVERY_MS, with the rest. */
  setRefused(counts: Readonly<Record<string, Readonly<Record<string, number>>>>): void {
    const sources = Object.entries(counts).filter(
      ([, byReason]) => Object.keys(byReason).length > 0,
    )
    const text = JSON.stringify(sources)
    if (text === this.#refusedText) return
    this.#refusedText = text
    this.#refused = sources.length > 0 ? Object.fromEntries(sources) : undefined
    if (this.#refusedTimer) return
    this.#refusedTimer = this.#clock.setTimeout(() => {
      this.#refusedTimer = undefined
      this.#publish()
    }, REFUSALS_EVERY_MS)
  }

  current(): StatusMessage {
    return {
      v: PROTOCOL_VERSION,
      online: true,
      state: this.#state,
      muted: this.#muted,
      model: this.#model,
      since: this.#since,
      ...(this.#reason !== undefined && { reason: this.#reason }),
      ...(this.#falseWakes > 0 && { falseWakes: this.#falseWakes }),
      ...(this.#volume !== undefined && { volume: this.#volume }),
      ...(this.#sensitivity !== undefined && { sensitivity: this.#sensitivity }),
      ...(this.#refused && { refused: this.#refused }),
      ...(this.#providers && { providers: this.#providers }),
      ...(this.#wakeCheck && { wakeCheck: this.#wakeCheck }),
    }
  }

  /** A clean shutdown sends no last will, so say "offline" ourselves. */
  async goOffline(): Promise<void> {
    if (this.#refusedTimer) this.#clock.clearTimeout(this.#refusedTimer)
    this.#refusedTimer = undefined
    if (!this.#conn.connected) return
    const msg = { ...offlineStatus(this.#model), since: this.#clock.now() }
    await this.#conn.publish(this.#topic, JSON.stringify(msg), { retain: true, qos: 1 })
  }

  #publish(): void {
    // Re-published once a (re)connection's subscriptions are answered; a change before that waits.
    if (!this.#conn.connected || !this.#heard) return
    this.#conn
      .publish(this.#topic, JSON.stringify(this.current()), { retain: true, qos: 1 })
      .catch((err: unknown) =>
        this.#log.warn(
          { event: 'status_not_published', err: errorText(err) },
          'status not published',
        ),
      )
  }
}
