import { readFileSync } from 'node:fs'
import type { DeviceMqttOptions } from '../adapters/mqtt/index.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import { DEFAULT_PREFIX } from '../protocol/index.js'
import type { PhoneKeyStore } from './phone-keys.js'

/**
 * The device's MQTT settings from the environment, until the config module takes this over.
 * Secrets (the broker password, a TLS key) come only from the environment or from files named
 * there — never from the command line, and they are never logged.
 *
 *   NOCTURN_MQTT_URL, NOCTURN_DEVICE_ID, NOCTURN_MQTT_PREFIX, NOCTURN_MQTT_USERNAME,
 *   NOCTURN_MQTT_PASSWORD or NOCTURN_MQTT_PASSWORD_FILE,
 *   NOCTURN_MQTT_CA_FILE, NOCTURN_MQTT_CERT_FILE, NOCTURN_MQTT_KEY_FILE (TLS, all optional)
 */
export function deviceMqttFromEnv(
  env: NodeJS.ProcessEnv,
  deps: { phones: PhoneKeyStore; logger: Logger; clock: Clock; model?: string | null },
): DeviceMqttOptions {
  const url = env.NOCTURN_MQTT_URL
  const deviceId = env.NOCTURN_DEVICE_ID
  if (!url) throw new Error('NOCTURN_MQTT_URL is not set (e.g. mqtt://hub.local:1883)')
  if (!deviceId) throw new Error('NOCTURN_DEVICE_ID is not set (e.g. kitchen)')
  if (/^mqtts?:\/\/[^/]*@/.test(url)) {
    throw new Error(
      'NOCTURN_MQTT_URL must not carry credentials; use NOCTURN_MQTT_USERNAME and a password file',
    )
  }
  const password = env.NOCTURN_MQTT_PASSWORD_FILE
    ? readFileSync(env.NOCTURN_MQTT_PASSWORD_FILE, 'utf8').trim()
    : env.NOCTURN_MQTT_PASSWORD
  const file = (name: string) => (env[name] ? readFileSync(env[name] as string) : undefined)
  const ca = file('NOCTURN_MQTT_CA_FILE')
  const cert = file('NOCTURN_MQTT_CERT_FILE')
  const key = file('NOCTURN_MQTT_KEY_FILE')
  return {
    url,
    deviceId,
    prefix: env.NOCTURN_MQTT_PREFIX ?? DEFAULT_PREFIX,
    ...(env.NOCTURN_MQTT_USERNAME !== undefined && { username: env.NOCTURN_MQTT_USERNAME }),
    ...(password !== undefined && { password }),
    ...(ca && { ca }),
    ...(cert && { cert }),
    ...(key && { key }),
    phones: () => deps.phones.keys(),
    logger: deps.logger,
    clock: deps.clock,
    model: deps.model ?? null,
  }
}
