import type { Logger } from '../../core/logger.js'
import type { DeviceState } from '../../device/device-state.js'
import type { Clock } from '../../ports/clock.js'
import { DEFAULT_PREFIX, type PhoneKeys, topicsFor } from '../../protocol/index.js'
import { MqttApprover } from './approver.js'
import { MqttConnection } from './connection.js'
import { DEFAULT_DISCOVERY_PREFIX, haTopicsFor } from './home-assistant/discovery.js'
import { HomeAssistantBridge } from './home-assistant/home-assistant.js'
import { MqttStatus, offlineStatus } from './status.js'

export interface DeviceMqttOptions {
  readonly url: string
  readonly deviceId: string
  readonly prefix?: string
  readonly username?: string
  readonly password?: string
  readonly ca?: string | Buffer
  readonly cert?: string | Buffer
  readonly key?: string | Buffer
  readonly model?: string | null
  readonly phones: PhoneKeys
  readonly logger: Logger
  /** One clock for the connection, the approver and the status (wired in app/). */
  readonly clock: Clock
  readonly audience?: string
  readonly backoffMinMs?: number
  readonly backoffMaxMs?: number
  /**
   * false: not connecting yet; the caller calls `connection.start()` (the appliance does once it
   * listens: creating mqtt.js's client loads its transports and costs tens of ms of start-up).
   */
  readonly connect?: boolean
  /**
   * The device's state: it counts the refused decisions (the status shows them), and Home
   * Assistant follows it and commands it.
   */
  readonly device?: DeviceState
  /** The device in Home Assistant (docs/home-assistant.md); absent: no Home Assistant topic is touched. */
  readonly homeAssistant?: {
    /** false: the discovery config is removed at every connection. */
    readonly discovery: boolean
    readonly name?: string
    readonly discoveryPrefix?: string
    readonly version?: string
    /** The phone app's address (Home Assistant's configuration_url). */
    readonly configurationUrl?: string
    /** The wake sensitivity select (listen.mode `wake`); absent: not offered. */
    readonly sensitivity?: boolean
    readonly announce: (text: string) => void
  }
}

/**
 * The device's MQTT side, wired: one connection with its last will, the approvals' wire (the desk
 * that holds their life is app/compose/'s to wire over it), the status.
 */
export function createDeviceMqtt(options: DeviceMqttOptions): {
  connection: MqttConnection
  approver: MqttApprover
  status: MqttStatus
  homeAssistant?: HomeAssistantBridge
  close(): Promise<void>
} {
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const topics = topicsFor(prefix, options.deviceId)
  const model = options.model ?? null
  const connection = new MqttConnection({
    url: options.url,
    clientId: `nocturn-${options.deviceId}`,
    ...(options.username !== undefined && { username: options.username }),
    ...(options.password !== undefined && { password: options.password }),
    ...(options.ca !== undefined && { ca: options.ca }),
    ...(options.cert !== undefined && { cert: options.cert }),
    ...(options.key !== undefined && { key: options.key }),
    ...(options.backoffMinMs !== undefined && { backoffMinMs: options.backoffMinMs }),
    ...(options.backoffMaxMs !== undefined && { backoffMaxMs: options.backoffMaxMs }),
    will: {
      topic: topics.status,
      payload: JSON.stringify(offlineStatus(model)),
      retain: true,
      qos: 1,
    },
    logger: options.logger,
    clock: options.clock,
  })
  const approver = new MqttApprover({
    connection,
    deviceId: options.deviceId,
    prefix,
    phones: options.phones,
    logger: options.logger,
    clock: options.clock,
    ...(options.audience !== undefined && { audience: options.audience }),
    ...(options.device && {
      onRefused: (reason: string) => options.device?.refused('decisions', reason),
    }),
  })
  const status = new MqttStatus({
    connection,
    topic: topics.status,
    model,
    logger: options.logger,
    clock: options.clock,
  })
  const ha = options.homeAssistant
  if (ha && !options.device) throw new Error('Home Assistant needs the device state to follow')
  const homeAssistant =
    ha &&
    options.device &&
    new HomeAssistantBridge({
      connection,
      device: options.device,
      discovery: ha.discovery,
      topics: haTopicsFor(
        ha.discoveryPrefix ?? DEFAULT_DISCOVERY_PREFIX,
        topics.base,
        options.deviceId,
      ),
      deviceId: options.deviceId,
      name: ha.name ?? `Nocturn ${options.deviceId}`,
      version: ha.version,
      configurationUrl: ha.configurationUrl,
      statusTopic: topics.status,
      sensitivity: ha.sensitivity ?? false,
      announce: ha.announce,
      logger: options.logger,
      clock: options.clock,
    })
  if (options.connect !== false) connection.start()
  return {
    connection,
    approver,
    status,
    ...(homeAssistant && { homeAssistant }),
    async close() {
      homeAssistant?.close()
      // Says what was held back, and stops the summary's timer.
      approver.flushRejections()
      await status.goOffline().catch(() => {})
      await connection.close()
    },
  }
}
