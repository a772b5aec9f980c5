import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { DEFAULT_PREFIX, topicsFor } from '../../protocol/index.js'
import { MqttApprover, type PhoneKeys, type SelfApproval } from './approver.js'
import { MqttConnection } from './connection.js'
import { MqttStatus, offlineStatus } from './status.js'

export {
  MqttApprover,
  maySelfApprove,
  type PhoneKeys,
  type RejectReason,
  type SelfApproval,
} from './approver.js'
export { MqttConnection, type PublishOptions, redactUrl } from './connection.js'
export {
  type ConversationEndpoint,
  type ConversationEndpointOptions,
  createConversationEndpoint,
} from './conversation-endpoint.js'
export { MqttStatus, offlineStatus } from './status.js'

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
  readonly selfApproval?: SelfApproval
  readonly backoffMinMs?: number
  readonly backoffMaxMs?: number
}

/** The device's MQTT side, wired: one connection with its last will, the approver, the status. */
export function createDeviceMqtt(o: DeviceMqttOptions): {
  connection: MqttConnection
  approver: MqttApprover
  status: MqttStatus
  close(): Promise<void>
} {
  const prefix = o.prefix ?? DEFAULT_PREFIX
  const topics = topicsFor(prefix, o.deviceId)
  const model = o.model ?? null
  const connection = new MqttConnection({
    url: o.url,
    clientId: `nocturn-${o.deviceId}`,
    ...(o.username !== undefined && { username: o.username }),
    ...(o.password !== undefined && { password: o.password }),
    ...(o.ca !== undefined && { ca: o.ca }),
    ...(o.cert !== undefined && { cert: o.cert }),
    ...(o.key !== undefined && { key: o.key }),
    ...(o.backoffMinMs !== undefined && { backoffMinMs: o.backoffMinMs }),
    ...(o.backoffMaxMs !== undefined && { backoffMaxMs: o.backoffMaxMs }),
    will: {
      topic: topics.status,
      payload: JSON.stringify(offlineStatus(model)),
      retain: true,
      qos: 1,
    },
    logger: o.logger,
    clock: o.clock,
  })
  const approver = new MqttApprover({
    connection,
    deviceId: o.deviceId,
    prefix,
    phones: o.phones,
    logger: o.logger,
    clock: o.clock,
    ...(o.audience !== undefined && { audience: o.audience }),
    ...(o.selfApproval !== undefined && { selfApproval: o.selfApproval }),
  })
  const status = new MqttStatus({
    connection,
    topic: topics.status,
    model,
    logger: o.logger,
    clock: o.clock,
  })
  connection.start()
  return {
    connection,
    approver,
    status,
    async close() {
      approver.withdrawAll()
      // Says what was held back, and stops the summary's timer.
      approver.flushRejections()
      await status.goOffline().catch(() => {})
      await connection.close()
    },
  }
}
