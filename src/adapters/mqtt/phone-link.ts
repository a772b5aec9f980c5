import { errorText } from '../../core/errors.js'
import type { Clock } from '../../ports/clock.js'
import type { OpenPhoneLink, PhoneLink } from '../../ports/phone-link.js'
import { newNonce } from '../../protocol/index.js'
import { MqttConnection } from './connection.js'

/**
 * Phone links over MQTT: each its own client id, the phone's subscriptions renewed on every
 * (re)connect. `clock` runs the reconnect back-off (a phone is its own program: the real one).
 */
export function phoneLinks(clock: Clock): OpenPhoneLink {
  return (r): PhoneLink => {
    const conn = new MqttConnection({
      url: r.broker,
      clientId: `nocturn-phone-${r.phone}-${r.role}-${newNonce().slice(0, 8)}`,
      ...(r.username !== undefined && { username: r.username }),
      ...(r.password !== undefined && { password: r.password }),
      ...(r.ca !== undefined && { ca: r.ca }),
      logger: r.logger,
      clock,
    })
    let resolveReady!: () => void
    const ready = new Promise<void>((resolve) => {
      resolveReady = resolve
    })
    conn.onMessage(r.onMessage)
    conn.onConnect(() => {
      conn
        .subscribe([...r.filters])
        .then(resolveReady, (err: unknown) =>
          r.logger.error(
            { event: 'phone_subscribe_failed', err: errorText(err), filters: r.filters },
            'phone cannot subscribe',
          ),
        )
    })
    return {
      ready,
      start: () => conn.start(),
      publish: (topic, payload, opts) => conn.publish(topic, payload, opts),
      close: () => conn.close(),
    }
  }
}
