import { newNonce } from '../../src/protocol/phone-crypto.js'
import { MqttClient } from './mqtt/client.js'
import type { Speaker } from './pairing.js'

/** How long a tap on a notification may take to reach the broker before it says it did not. */
const DELIVERY_TIMEOUT_MS = 10_000

/**
 * One signed message to the household broker from a service worker, over MQTT-over-WebSocket as
 * the page sends it, as this phone's own broker user: connect, publish at QoS 1, wait for the
 * broker's acknowledgement, disconnect. The worker lives only while a notification's tap is
 * handled, so it keeps no connection. Resolves once the broker took it; rejects otherwise.
 */
export async function publishOnce(s: Speaker, topic: string, message: string): Promise<void> {
  if (!s.wsUrl) throw new Error(`no broker address for ${s.name}`)
  const client = new MqttClient(s.wsUrl, {
    clientId: `nocturn-sw-${s.phone}-${newNonce().slice(0, 10)}`,
    username: s.username,
    // As the page does: no password where the broker takes the phone without one.
    password: s.password || undefined,
    reconnectPeriod: 0,
    connectTimeout: DELIVERY_TIMEOUT_MS,
  })
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the broker did not take it within ${DELIVERY_TIMEOUT_MS} ms`)),
        DELIVERY_TIMEOUT_MS,
      )
      client.on('error', (err) => {
        clearTimeout(timer)
        reject(err)
      })
      client.on('connect', () => {
        client.publish(topic, message, (err) => {
          clearTimeout(timer)
          if (err) reject(err)
          else resolve()
        })
      })
    })
  } finally {
    client.end()
  }
}
