import { hostname } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { renderUnicodeCompact } from 'uqr'
import { errorText } from '../../core/errors.js'
import { DEFAULT_PREFIX, isId, isPrefix, pairingUri } from '../../protocol/index.js'
import { ConfigError } from '../config/errors.js'
import { configPathOf, DEFAULT_CONFIG_PATH, type LoadedConfig, loadConfig } from '../config/load.js'
import { appUrlOf, pairingLink } from '../phone-app.js'
import { DEV_PHONES_DIR, PhoneKeyStore } from '../phone-keys.js'
import { parsedOrUsage } from './parsed-or-usage.js'

export interface Io {
  readonly out: NodeJS.WritableStream
  readonly err: NodeJS.WritableStream
  readonly env: NodeJS.ProcessEnv
}

export const USAGE = `usage:
  nocturn pair <phone-id> "<name>" [--config PATH] [--broker URL] [--device ID] [--prefix P] [--dir DIR]
                                   [--no-qr] [--app-host NAME] [--app-port N] [--app-https]
  nocturn pair --list [--config PATH] [--dir DIR]
  nocturn pair --revoke <phone-id> [--config PATH] [--dir DIR]

The settings come from the speaker's configuration, the file "nocturn run" reads: --config, else
$NOCTURN_CONFIG, else ${DEFAULT_CONFIG_PATH} when it exists. Its mqtt.url, mqtt.deviceId and
mqtt.prefix go into the pairing, the key is kept in its phonesDir (where the speaker looks for the
phone), and the link names the app by phoneApp.publicHost, phoneApp.port and HTTPS when phoneApp
has TLS files. No secret is read: the pairing never carries the broker password.

Each setting can be overridden, an option over the environment over the configuration:
  --broker URL     NOCTURN_MQTT_URL     mqtt://host:port or mqtts://host:port, no user or password
  --device ID      NOCTURN_DEVICE_ID    the speaker's device id
  --prefix P       NOCTURN_MQTT_PREFIX  the topic prefix (default ${DEFAULT_PREFIX})
  --dir DIR        NOCTURN_PHONES_DIR   the folder of the phones' keys
  --app-host NAME  NOCTURN_APP_HOST     the name phones reach this device by
  --app-port N     NOCTURN_APP_PORT     the phone app's port
  --app-https                           the phone app is served over HTTPS
Without a configuration (a development checkout) the broker and device must be given, the keys go
to ${DEV_PHONES_DIR}, and the link is this machine's host name + ".local", port 8080.
The QR code opens the phone app served by this device, the pairing in the link's #fragment (never
sent to a server); --no-qr prints the link and the pairing line only.
`

/** `nocturn pair`: give a phone its own key, shown once as a URI and a QR code; list; revoke. */
export function run(args: string[]): Promise<number> {
  return pair(args, { out: process.stdout, err: process.stderr, env: process.env })
}

/**
 * A setting from its option, else its environment variable, else the configuration's key, with
 * where it came from, so a message names what to fix.
 */
function setting<T = string>(
  option: [name: string, value: string | undefined],
  env: [name: string, value: string | undefined],
  config: [key: string, value: T | undefined] | undefined,
): { readonly value: string | T | undefined; readonly from: string } {
  if (option[1] !== undefined) return { value: option[1], from: option[0] }
  if (env[1]) return { value: env[1], from: env[0] }
  if (config?.[1] !== undefined) return { value: config[1], from: config[0] }
  return { value: undefined, from: option[0] }
}

export async function pair(args: string[], io: Io): Promise<number> {
  const parsed = parsedOrUsage('pair', () => parse(args), { err: io.err, usage: USAGE })
  if (!parsed) return 2
  const { values, positionals } = parsed
  const fail = (message: string, code = 2) => {
    io.err.write(`nocturn pair: ${message}\n`)
    return code
  }

  // The speaker's configuration, when there is one; no secret is read from or for it.
  const configPath = configPathOf(values.config, io.env)
  let loaded: LoadedConfig | undefined
  if (configPath !== undefined) {
    try {
      loaded = loadConfig({ path: configPath, env: io.env, secrets: false })
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      return fail(err.problems.join('\n'))
    }
  }
  const c = loaded?.config
  const inConfig = (key: string) => `${key} in ${configPath}`

  const dir =
    setting(
      ['--dir', values.dir],
      ['NOCTURN_PHONES_DIR', io.env.NOCTURN_PHONES_DIR],
      c && [inConfig('phonesDir'), c.phonesDir],
    ).value ?? DEV_PHONES_DIR
  if (c && resolve(dir) !== resolve(c.phonesDir)) {
    io.err.write(
      `nocturn pair: note: the speaker (${configPath}) reads phone keys from ${c.phonesDir}, not ${dir}: drop --dir / NOCTURN_PHONES_DIR to use its folder\n`,
    )
  }
  const store = new PhoneKeyStore(dir)
  if (values.list) {
    const phones = store.list()
    if (phones.length === 0) io.out.write(`no phones are paired (keys in ${dir})\n`)
    for (const p of phones) {
      io.out.write(`${p.phone}\t${p.name}\tpaired ${new Date(p.createdAt).toISOString()}\n`)
    }
    return 0
  }
  if (values.revoke !== undefined) {
    if (!store.revoke(values.revoke)) {
      return fail(`no phone "${values.revoke}" is paired (keys in ${dir})`, 1)
    }
    io.out.write(`revoked ${values.revoke}: the speaker no longer asks or believes it\n`)
    return 0
  }
  const [phone, name] = positionals
  if (!phone || !name || positionals.length > 2) {
    io.err.write(USAGE)
    return 2
  }

  const noConfig =
    configPath === undefined
      ? ` or --config <path> of the speaker's configuration (there is none at $NOCTURN_CONFIG or ${DEFAULT_CONFIG_PATH})`
      : ''
  const broker = setting(
    ['--broker', values.broker],
    ['NOCTURN_MQTT_URL', io.env.NOCTURN_MQTT_URL],
    c && [inConfig('mqtt.url'), c.mqtt?.url],
  )
  if (broker.value === undefined) {
    return fail(
      c
        ? `no broker: ${configPath} has no mqtt section — add mqtt.url and mqtt.deviceId there (the speaker needs them too), or pass --broker mqtt://host:1883`
        : `no broker: pass --broker mqtt://host:port (or set NOCTURN_MQTT_URL)${noConfig}`,
    )
  }
  // The value is not repeated: a URL with a password in it is exactly what is refused here.
  if (!/^mqtts?:\/\/[^@]+$/.test(broker.value)) {
    return fail(
      `${broker.from} must be mqtt://host:port or mqtts://host:port, without a user or password${broker.from === '--broker' ? '' : ' — or pass --broker mqtt://host:port'}`,
    )
  }
  const device = setting(
    ['--device', values.device],
    ['NOCTURN_DEVICE_ID', io.env.NOCTURN_DEVICE_ID],
    c && [inConfig('mqtt.deviceId'), c.mqtt?.deviceId],
  )
  if (device.value === undefined) {
    return fail(`no device id: pass --device <id> (or set NOCTURN_DEVICE_ID)${noConfig}`)
  }
  if (!isId(device.value)) return fail(`${device.from} must be a device id, e.g. kitchen`)
  const prefix = setting(
    ['--prefix', values.prefix],
    ['NOCTURN_MQTT_PREFIX', io.env.NOCTURN_MQTT_PREFIX],
    c && [inConfig('mqtt.prefix'), c.mqtt?.prefix],
  )
  const topicPrefix = prefix.value ?? DEFAULT_PREFIX
  if (!isPrefix(topicPrefix)) return fail(`${prefix.from} is not a usable topic prefix`)
  const appHost = setting(
    ['--app-host', values['app-host']],
    ['NOCTURN_APP_HOST', io.env.NOCTURN_APP_HOST],
    c && [inConfig('phoneApp.publicHost'), c.phoneApp.publicHost],
  )
  const host = appHost.value ?? `${hostname()}.local`
  if (!/^[A-Za-z0-9.-]{1,253}$/.test(host)) {
    return fail(`${appHost.from} must be a host name or IPv4 address, e.g. kitchen.local`)
  }
  const appPort = setting(
    ['--app-port', values['app-port']],
    ['NOCTURN_APP_PORT', io.env.NOCTURN_APP_PORT],
    c && [inConfig('phoneApp.port'), c.phoneApp.port],
  )
  const port = Number(appPort.value ?? 8080)
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return fail(
      `${appPort.from} must be a port number (1–65535)${appPort.from === '--app-port' ? '' : ' — or pass --app-port N'}`,
    )
  }
  const https = values['app-https'] === true || c?.phoneApp.tlsCertFile !== undefined

  let created: ReturnType<PhoneKeyStore['add']>
  try {
    created = store.add(phone, name)
  } catch (err) {
    return fail(errorText(err), 1)
  }
  const uri = pairingUri({
    broker: broker.value,
    device: device.value,
    prefix: topicPrefix,
    phone,
    key: created.key,
  })
  const link = pairingLink(appUrlOf(host, port, https), uri)
  io.out.write(
    `Paired "${name}" as ${phone} with the speaker ${device.value} (its key is kept in ${dir}).\n` +
      "Scan this with the phone's camera: it opens the phone app, paired.\n" +
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
      config: { type: 'string' },
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
