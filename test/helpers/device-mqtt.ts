import { realClock } from '../../src/adapters/clock/real-clock.js'
import { createDeviceMqtt, type DeviceMqttOptions } from '../../src/adapters/mqtt/index.js'
import { PhoneRequests } from '../../src/adapters/mqtt/phone-requests.js'
import type { Logger } from '../../src/core/logger.js'
import { silentLogger } from '../../src/core/logger.js'
import type { DeviceState } from '../../src/device/device-state.js'
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
