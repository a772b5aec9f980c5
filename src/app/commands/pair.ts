import { hostname } from 'node:os'
import { parseArgs } from 'node:util'
import { renderUnicodeCompact } from 'uqr'
import { errorText } from '../../core/errors.js'
import { DEFAULT_PREFIX, isId, isPrefix, pairingUri } from '../../protocol/index.js'
import { appUrlOf, pairingLink } from '../phone-app.js'
import { DEV_PHONES_DIR, PhoneKeyStore } from '../phone-keys.js'

export interface Io {
  readonly out: NodeJS.WritableStream
  readonly err: NodeJS.WritableStream
  readonly env: NodeJS.ProcessEnv
}

const USAGE = `usage:
  nocturn pair <phone-id> "<name>" [--broker URL] [--device ID] [--prefix P] [--dir DIR] [--no-qr]
                                   [--app-host NAME] [--app-port N] [--app-https]
  nocturn pair --list [--dir DIR]
  nocturn pair --revoke <phone-id> [--dir DIR]

Broker URL, device id and prefix also come from NOCTURN_MQTT_URL, NOCTURN_DEVICE_ID and
NOCTURN_MQTT_PREFIX; the key folder from NOCTURN_PHONES_DIR (default ${DEV_PHONES_DIR}).
The QR code opens the phone app served by this device, the pairing in the link's #fragment (never
sent to a server): the name phones reach the device by from --app-host or NOCTURN_APP_HOST
(default: this machine's host name + ".local"), the port from --app-port or NOCTURN_APP_PORT
(default 8080, as phoneApp.port), --app-https when phoneApp has TLS files.
`

/** `nocturn pair`: give a phone its own key, shown once as a URI and a QR code; list; revoke. */
export function run(args: string[]): Promise<number> {
  return pair(args, { out: process.stdout, err: process.stderr, env: process.env })
}

export async function pair(args: string[], io: Io): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(args)
  } catch (err) {
    io.err.write(`nocturn pair: ${errorText(err)}\n\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  const store = new PhoneKeyStore(values.dir ?? io.env.NOCTURN_PHONES_DIR ?? DEV_PHONES_DIR)
  if (values.list) {
    const phones = store.list()
    if (phones.length === 0) io.out.write('no phones are paired\n')
    for (const p of phones) {
      io.out.write(`${p.phone}\t${p.name}\tpaired ${new Date(p.createdAt).toISOString()}\n`)
    }
    return 0
  }
  if (values.revoke !== undefined) {
    if (!store.revoke(values.revoke)) {
      io.err.write(`nocturn pair: no phone "${values.revoke}" is paired\n`)
      return 1
    }
    io.out.write(`revoked ${values.revoke}: the speaker no longer asks or believes it\n`)
    return 0
  }
  const [phone, name] = positionals
  if (!phone || !name || positionals.length > 2) {
    io.err.write(USAGE)
    return 2
  }
  const broker = values.broker ?? io.env.NOCTURN_MQTT_URL ?? ''
  const device = values.device ?? io.env.NOCTURN_DEVICE_ID ?? ''
  const prefix = values.prefix ?? io.env.NOCTURN_MQTT_PREFIX ?? DEFAULT_PREFIX
  if (!/^mqtts?:\/\/[^@]+$/.test(broker)) {
    io.err.write(
      'nocturn pair: --broker must be mqtt://host:port or mqtts://host:port, without a password\n',
    )
    return 2
  }
  if (!isId(device)) {
    io.err.write('nocturn pair: --device (or NOCTURN_DEVICE_ID) must be a device id\n')
    return 2
  }
  if (!isPrefix(prefix)) {
    io.err.write('nocturn pair: --prefix is not a usable topic prefix\n')
    return 2
  }
  const appHost = values['app-host'] ?? io.env.NOCTURN_APP_HOST ?? `${hostname()}.local`
  const appPort = Number(values['app-port'] ?? io.env.NOCTURN_APP_PORT ?? 8080)
  if (!/^[A-Za-z0-9.-]{1,253}$/.test(appHost)) {
    io.err.write(
      'nocturn pair: --app-host must be a host name or IPv4 address, e.g. kitchen.local\n',
    )
    return 2
  }
  if (!Number.isInteger(appPort) || appPort < 1 || appPort > 65535) {
    io.err.write('nocturn pair: --app-port must be a port number (1–65535)\n')
    return 2
  }
  let created: ReturnType<PhoneKeyStore['add']>
  try {
    created = store.add(phone, name)
  } catch (err) {
    io.err.write(`nocturn pair: ${errorText(err)}\n`)
    return 1
  }
  const uri = pairingUri({ broker, device, prefix, phone, key: created.key })
  const link = pairingLink(appUrlOf(appHost, appPort, values['app-https'] === true), uri)
  io.out.write(
    `Paired "${name}" as ${phone}. Scan this with the phone's camera: it opens the phone app, paired.\n` +
      'Or open the link below on the phone, or paste the pairing line into the app.\n' +
      "They hold the phone's key and are shown only this once: keep them private.\n\n",
  )
  if (!values['no-qr']) io.out.write(`${renderUnicodeCompact(link, { border: 2 })}\n\n`)
  io.out.write(`${link}\n\n${uri}\n`)
  return 0
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      list: { type: 'boolean' },
      revoke: { type: 'string' },
      dir: { type: 'string' },
      broker: { type: 'string' },
      device: { type: 'string' },
      prefix: { type: 'string' },
      'no-qr': { type: 'boolean' },
      'app-host': { type: 'string' },
      'app-port': { type: 'string' },
      'app-https': { type: 'boolean' },
    },
  })
}
