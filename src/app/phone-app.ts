import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { fileURLToPath } from 'node:url'
import {
  type PhoneAppServer,
  startPhoneAppServer,
} from '../adapters/http-static/phone-app-server.js'
import type { Logger } from '../core/logger.js'
import type { Config } from './config/schema.js'

/** The port of Mosquitto's WebSocket listener in docs/protocol.md. */
export const DEFAULT_BROKER_WS_PORT = 9001

/** dist/web of this installation: the same from src/app (tsx) and dist/app (compiled). */
export const DEFAULT_APP_ROOT = fileURLToPath(new URL('../../dist/web', import.meta.url))

/** What `/config.json` tells the app (docs/phone-app.md). */
export interface PhoneAppConfig {
  readonly brokerWsUrl: string
  readonly device: string
  readonly prefix: string
}

const LOOPBACK = /^(localhost|127(\.\d+){3}|::1|\[::1\])$/i

/**
 * The broker's WebSocket URL as a phone must use it: `phoneApp.brokerWsUrl` if set; otherwise the
 * host of `mqtt.url` on port 9001 — and when that host is loopback (the broker runs on this very
 * device), the name the browser reached the device by, since "localhost" on a phone is the phone.
 * `wss:` when the broker is reached over TLS or the page itself is HTTPS (a secure page may not
 * open a plain WebSocket).
 */
export function brokerWsUrlFor(c: Config, pageHost: string | undefined): string {
  if (c.phoneApp.brokerWsUrl) return c.phoneApp.brokerWsUrl
  const mqtt = new URL(c.mqtt?.url ?? 'mqtt://localhost')
  const secure =
    mqtt.protocol === 'mqtts:' || mqtt.protocol === 'wss:' || c.phoneApp.tlsCertFile !== undefined
  let host = mqtt.hostname
  if (LOOPBACK.test(host)) host = pageHost ?? publicHostOf(c)
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`
  return `${secure ? 'wss' : 'ws'}://${host}:${DEFAULT_BROKER_WS_PORT}`
}

/** The name phones reach this device by: `phoneApp.publicHost`, else `<hostname>.local`. */
export function publicHostOf(c: Config): string {
  return c.phoneApp.publicHost ?? `${hostname()}.local`
}

/** The app's address as a phone opens it, e.g. `http://kitchen.local:8080/`. */
export function phoneAppUrl(c: Config): string {
  const scheme = c.phoneApp.tlsCertFile ? 'https' : 'http'
  const port = c.phoneApp.port
  const standard = (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443)
  return `${scheme}://${publicHostOf(c)}${standard ? '' : `:${port}`}/`
}

/**
 * Serves the app when it is enabled and there is a broker for it to reach. A port already taken
 * does not stop the speaker: the app is an accessory to it. That is logged as an error, and
 * `nocturn doctor` names it.
 */
export async function startPhoneApp(
  c: Config,
  log: Logger,
  over: { port?: number } = {},
): Promise<PhoneAppServer | undefined> {
  const p = c.phoneApp
  if (!p.enabled || !c.mqtt) return undefined
  const mqtt = c.mqtt
  try {
    return await startPhoneAppServer({
      root: p.root ?? DEFAULT_APP_ROOT,
      port: over.port ?? p.port,
      ...(p.host !== undefined && { host: p.host }),
      ...(p.tlsCertFile &&
        p.tlsKeyFile && {
          tls: { cert: readFileSync(p.tlsCertFile), key: readFileSync(p.tlsKeyFile) },
        }),
      config: (pageHost): PhoneAppConfig => ({
        brokerWsUrl: brokerWsUrlFor(c, pageHost),
        device: mqtt.deviceId,
        prefix: mqtt.prefix,
      }),
      logger: log,
    })
  } catch (err) {
    const code = (err as { code?: unknown }).code
    log.error(
      { port: p.port, code: typeof code === 'string' ? code : undefined, err: String(err) },
      'phone app not served',
    )
    return undefined
  }
}
