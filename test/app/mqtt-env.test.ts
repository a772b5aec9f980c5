import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { deviceMqttFromEnv } from '../../src/app/mqtt-env.js'
import { PhoneKeyStore } from '../../src/app/phone-keys.js'
import { silentLogger } from '../../src/core/logger.js'

describe('device MQTT settings from the environment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-env-'))
  const deps = {
    phones: new PhoneKeyStore(join(dir, 'phones')),
    logger: silentLogger,
    clock: realClock(),
  }

  it('reads the password from a file and the TLS parts from files', () => {
    writeFileSync(join(dir, 'pw'), 's3cret\n', { mode: 0o600 })
    writeFileSync(join(dir, 'ca.pem'), 'CA')
    const o = deviceMqttFromEnv(
      {
        NOCTURN_MQTT_URL: 'mqtts://hub.local:8883',
        NOCTURN_DEVICE_ID: 'kitchen',
        NOCTURN_MQTT_USERNAME: 'nocturn-device',
        NOCTURN_MQTT_PASSWORD_FILE: join(dir, 'pw'),
        NOCTURN_MQTT_CA_FILE: join(dir, 'ca.pem'),
      },
      deps,
    )
    expect(o).toMatchObject({
      url: 'mqtts://hub.local:8883',
      deviceId: 'kitchen',
      prefix: 'nocturn/v1',
      password: 's3cret',
    })
    expect(o.ca?.toString()).toBe('CA')
    expect(o.phones().size).toBe(0)
  })

  it('refuses a URL with credentials in it, and says what is missing', () => {
    expect(() =>
      deviceMqttFromEnv({ NOCTURN_MQTT_URL: 'mqtt://u:p@hub:1883', NOCTURN_DEVICE_ID: 'k' }, deps),
    ).toThrow(/must not carry credentials/)
    expect(() => deviceMqttFromEnv({ NOCTURN_DEVICE_ID: 'k' }, deps)).toThrow(/NOCTURN_MQTT_URL/)
    expect(() => deviceMqttFromEnv({ NOCTURN_MQTT_URL: 'mqtt://hub:1883' }, deps)).toThrow(
      /NOCTURN_DEVICE_ID/,
    )
  })
})
