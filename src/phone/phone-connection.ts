import { realClock } from '../adapters/clock/real-clock.js'
import { MqttConnection } from '../adapters/mqtt/connection.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { newNonce, type Pairing } from '../protocol/index.js'

export interface PhoneConnectionOptions {
  readonly pairing: Pairing
  readonly username?: string
  readonly password?: string
  readonly ca?: string | Buffer
  readonly logger: Logger
}

/**
 * The phone's broker connection: its own client id, and the phone's subscriptions renewed on every
 * (re)connect. `ready` resolves after the first subscription, so nothing is missed after start.
 */
export function phoneConnection(
  options: PhoneConnectionOptions,
  role: string,
  filters: readonly string[],
  onMessage: (topic: string, payload: Buffer) => void,
  log: Logger,
): { conn: MqttConnection; ready: Promise<void> } {
  const conn = new MqttConnection({
    url: options.pairing.broker,
    clientId: `nocturn-phone-${options.pairing.phone}-${role}-${newNonce().slice(0, 8)}`,
    ...(options.username !== undefined && { username: options.username }),
    ...(options.password !== undefined && { password: options.password }),
    ...(options.ca !== undefined && { ca: options.ca }),
    logger: options.logger,
    // The phone client is its own program: its timers run on the real clock.
    clock: realClock(),
  })
  let resolveReady!: () => void
  const ready = new Promise<void>((r) => {
    resolveReady = r
  })
  conn.onMessage(onMessage)
  conn.onConnect(() => {
    conn
      .subscribe([...filters])
      .then(resolveReady, (err: unknown) =>
        log.error(
          { event: 'phone_subscribe_failed', err: errorText(err), filters },
          'phone cannot subscribe',
        ),
      )
  })
  return { conn, ready }
}
