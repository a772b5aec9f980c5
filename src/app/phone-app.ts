import { existsSync, readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type PhoneAppServer,
  startPhoneAppServer,
} from '../adapters/http-static/phone-app-server.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Config } from './config/schema.js'
import { portTakenReason } from './port-holder.js'

/** The port of Mosquitto's WebSocket listener in docs/protocol.md. */
const DEFAULT_BROKER_WS_PORT = 9001

/** dist/web of this installation: the same from src/app (tsx) and dist/app (compiled). */
export const DEFAULT_APP_ROOT = fileURLToPath(new URL('../../dist/web', import.meta.url))

/** What `/config.json` tells the app (docs/phone-app.md). */
interface PhoneAppConfig {
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
function publicHostOf(c: Config): string {
  return c.phoneApp.publicHost ?? `${hostname()}.local`
}

/** The app's address as a phone opens it, e.g. `http://kitchen.local:8080/`. */
export function phoneAppUrl(c: Config): string {
  return appUrlOf(publicHostOf(c), c.phoneApp.port, c.phoneApp.tlsCertFile !== undefined)
}

/**
 * The link a phone's camera opens: the app with the pairing in the URL fragment, which a browser
 * never sends to a server (docs/phone-app.md). `appUrl` is the app's address, e.g.
 * `http://kitchen.local:8080/`.
 */
export function pairingLink(appUrl: string, uri: string): string {
  return `${appUrl.split('#')[0]}#pair=${encodeURIComponent(uri)}`
}

/**
 * The app opened at one approval's card: `#card=<approval id>&device=<device id>` after the app's
 * address (docs/phone-app.md, "Links to a card"). Like the pairing link it lives in the fragment,
 * which the browser never sends to a server.
 */
export function cardLink(appUrl: string, device: string, approvalId: string): string {
  const id = encodeURIComponent(approvalId)
  return `${appUrl.split('#')[0]}#card=${id}&device=${encodeURIComponent(device)}`
}

/** The app's address from its parts: `http(s)://host[:port]/`, the port left out when standard. */
export function appUrlOf(host: string, port: number, tls: boolean): string {
  const scheme = tls ? 'https' : 'http'
  const standard = (!tls && port === 80) || (tls && port === 443)
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  return `${scheme}://${h}${standard ? '' : `:${port}`}/`
}

/**
 * The household CA certificate to serve: `phoneApp.caCertFile`, else the `ca.crt` that `nocturn
 * tls` left beside the device's certificate, when it is there.
 */
function householdCaFile(c: Config): string | undefined {
  const p = c.phoneApp
  if (p.caCertFile) return p.caCertFile
  if (!p.tlsCertFile) return undefined
  const beside = join(dirname(p.tlsCertFile), 'ca.crt')
  return existsSync(beside) ? beside : undefined
}

/**
 * Serves the app when it is enabled and there is a broker for it to reach. A port already taken
 * does not stop the speaker: the app is an accessory to it. That is logged as an error, told to
 * `onNotServed` (the appliance shows it on the LED and in the status) with the fix and what holds
 * the port, and `nocturn doctor` names it.
 */
export async function startPhoneApp(
  c: Config,
  log: Logger,
  over: { port?: number; onNotServed?: (reason: string) => void } = {},
): Promise<PhoneAppServer | undefined> {
  const p = c.phoneApp
  if (!p.enabled || !c.mqtt) return undefined
  const mqtt = c.mqtt
  const caFile = householdCaFile(c)
  try {
    return await startPhoneAppServer({
      root: p.root ?? DEFAULT_APP_ROOT,
      port: over.port ?? p.port,
      ...(p.host !== undefined && { host: p.host }),
      ...(p.tlsCertFile &&
        p.tlsKeyFile && {
          tls: { cert: readFileSync(p.tlsCertFile), key: readFileSync(p.tlsKeyFile) },
        }),
      ...(caFile !== undefined && { caCert: readFileSync(caFile) }),
      config: (pageHost): PhoneAppConfig => ({
        brokerWsUrl: brokerWsUrlFor(c, pageHost),
        device: mqtt.deviceId,
        prefix: mqtt.prefix,
      }),
      logger: log,
    })
  } catch (err) {
    const raw = (err as { code?: unknown }).code
    const code = typeof raw === 'string' ? raw : undefined
    const port = over.port ?? p.port
    const reason =
      code === 'EADDRINUSE' || code === 'EACCES'
        ? portTakenReason(port, code)
        : `the phone app is not served: ${errorText(err)}`
    log.error(
      { event: 'phone_app_not_served', port, code, err: errorText(err), reason },
      'phone app not served',
    )
    over.onNotServed?.(reason)
    return undefined
  }
}
