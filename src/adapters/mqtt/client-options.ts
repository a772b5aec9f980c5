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
 * The mqtt.js options every Nocturn client shares: MQTT 5 by default (a broker then answers a
 * forbidden publish with a reason code, 0x87, where 3.1.1 drops it silently), a clean session, no
 * mqtt.js reconnects (callers decide), and only the credentials that were given. `protocolVersion`
 * 4 is for a broker that refuses 5 (the embedded one): see `speaksOnly311`. No `writeCache`:
 * otherwise mqtt-packet fills a table of 65,536 two-byte Buffers, one per 16-bit number, at the
 * first packet written — about 7 MB of heap for the life of the process, to save allocating two
 * bytes per packet on a link that carries a few messages a minute (bench/startup.bench.ts).
 */
export function clientOptions(
  credentials: BrokerCredentials,
  connectTimeoutMs: number,
  protocolVersion: 4 | 5 = 5,
): IClientOptions {
  const opts: IClientOptions = {
    clientId: credentials.clientId,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: connectTimeoutMs,
    protocolVersion,
    writeCache: false,
  }
  if (credentials.username !== undefined) opts.username = credentials.username
  if (credentials.password !== undefined) opts.password = credentials.password
  if (credentials.ca !== undefined) opts.ca = credentials.ca
  if (credentials.cert !== undefined) opts.cert = credentials.cert
  if (credentials.key !== undefined) opts.key = credentials.key
  return opts
}

/**
 * Whether a connection error is the broker refusing MQTT 5 (3.1.1 CONNACK code 1, or v5's 0x84):
 * then the client connects again with 3.1.1, where a refused publish cannot be told apart.
 */
export function speaksOnly311(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === 1 || code === 0x84
}

/** The MQTT 5 reason codes a broker may answer a publish with, by name, for logs and messages. */
export function reasonName(code: number): string {
  const names: Record<number, string> = {
    128: 'unspecified error',
    131: 'implementation specific error',
    135: 'not authorized',
    144: 'topic name invalid',
    145: 'packet identifier in use',
    151: 'quota exceeded',
    153: 'payload format invalid',
  }
  return names[code] ?? `reason code 0x${code.toString(16)}`
}
