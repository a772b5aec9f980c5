import type { IClientOptions } from 'mqtt'

/** Who we are to the broker: client id, credentials and TLS material (PEM contents). */
export interface BrokerCredentials {
  readonly clientId: string
  readonly username?: string
  /** Read from a file or the environment by the caller; never logged. */
  readonly password?: string
  readonly ca?: string | Buffer
  readonly cert?: string | Buffer
  readonly key?: string | Buffer
}

/**
 * The mqtt.js options every Nocturn client shares: MQTT 3.1.1 (nothing needs v5), a clean session,
 * no mqtt.js reconnects (callers decide), and only the credentials that were given.
 */
export function clientOptions(o: BrokerCredentials, connectTimeoutMs: number): IClientOptions {
  const opts: IClientOptions = {
    clientId: o.clientId,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: connectTimeoutMs,
    protocolVersion: 4,
  }
  if (o.username !== undefined) opts.username = o.username
  if (o.password !== undefined) opts.password = o.password
  if (o.ca !== undefined) opts.ca = o.ca
  if (o.cert !== undefined) opts.cert = o.cert
  if (o.key !== undefined) opts.key = o.key
  return opts
}
