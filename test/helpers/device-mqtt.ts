import { realClock } from '../../src/adapters/clock/real-clock.js'
import { MqttConnection } from '../../src/adapters/mqtt/connection.js'
import { createDeviceMqtt, type DeviceMqttOptions } from '../../src/adapters/mqtt/index.js'
import { phoneLinks } from '../../src/adapters/mqtt/phone-link.js'
import { PhoneRequests } from '../../src/adapters/mqtt/phone-requests.js'
import { broadcastListener } from '../../src/approvals/broadcast-listener.js'
import { ApprovalDesk, type ApprovalDeskOptions } from '../../src/approvals/desk.js'
import type { Logger } from '../../src/core/logger.js'
import { silentLogger } from '../../src/core/logger.js'
import type { DeviceState } from '../../src/device/device-state.js'
import type { ApprovalBroadcast } from '../../src/ports/approval-broadcast.js'
import type { Pairing } from '../../src/protocol/index.js'
import type { PhoneKeys } from '../../src/protocol/phone-verifier.js'
import { PREFIX, USERS } from './brokers.js'

/**
 * The device's MQTT side as tests and benchmarks run it: `deviceId` on the broker at `url` as the
 * documented device user, under the test prefix, trusting `phones`; no logs and the real clock
 * unless `over` says otherwise.
 */
export function testDeviceMqtt(
  url: string,
  deviceId: string,
  phones: PhoneKeys,
  over: Partial<DeviceMqttOptions> = {},
): ReturnType<typeof createDeviceMqtt> {
  return createDeviceMqtt({
    url,
    deviceId,
    prefix: PREFIX,
    ...USERS.device,
    phones,
    logger: silentLogger,
    clock: realClock(),
    ...over,
  })
}

/**
 * The approval desk over a test device's wire, as app/compose/broker.ts wires it: what the gate
 * asks, and what withdraws everything at a stop. No logs and the real clock unless `over` says;
 * `over.broadcast` is told each request and ending, as Web Push is.
 */
export function testDesk(
  device: ReturnType<typeof createDeviceMqtt>,
  over: Partial<ApprovalDeskOptions> & { broadcast?: ApprovalBroadcast } = {},
): ApprovalDesk {
  const { broadcast, ...options } = over
  const desk = new ApprovalDesk({
    wire: device.approver,
    clock: realClock(),
    logger: silentLogger,
    ...options,
  })
  if (broadcast) desk.listen(broadcastListener(broadcast))
  return desk
}

/** How the tests' and benchmarks' phones reach the broker: MQTT, on the real clock. */
export const testPhoneLink = phoneLinks(realClock())

/** How phone `phone`, holding `key`, pairs with device `deviceId` on the broker at `url`. */
export function testPairing(url: string, deviceId: string, phone: string, key: Buffer): Pairing {
  return { broker: url, device: deviceId, prefix: PREFIX, phone, key }
}

/** The phones' request channel on a test device's connection, under the test prefix, real clock. */
export function testPhoneRequests(
  device: ReturnType<typeof createDeviceMqtt>,
  deviceId: string,
  phones: PhoneKeys,
  logger: Logger,
  /** Counts what was refused, as the composition wires it. */
  state?: DeviceState,
): PhoneRequests {
  return new PhoneRequests({
    connection: device.connection,
    phones,
    deviceId,
    prefix: PREFIX,
    logger,
    clock: realClock(),
    ...(state && { onRefused: (reason: string) => state.refused('requests', reason) }),
  })
}

/**
 * A phone's eye on a speaker's retained status: every status `deviceId` publishes on the broker at
 * `url`, parsed, in order, from the moment this resolves (subscribed). `close` ends it.
 */
export async function watchStatus<T>(
  url: string,
  deviceId = 'kitchen',
): Promise<{ readonly statuses: T[]; close(): Promise<void> }> {
  const statuses: T[] = []
  const watcher = new MqttConnection({
    url,
    clientId: `${deviceId}-status-watcher`,
    username: USERS.phone.username,
    password: USERS.phone.password,
    logger: silentLogger,
    clock: realClock(),
  })
  watcher.onMessage((_t, payload) => statuses.push(JSON.parse(payload.toString()) as T))
  watcher.start()
  await watcher.ready()
  await watcher.subscribe([`${PREFIX}/${deviceId}/status`])
  return { statuses, close: () => watcher.close() }
}
