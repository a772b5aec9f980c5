import { hostname, networkInterfaces } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { makeHouseholdTls } from '../../adapters/openssl/household-ca.js'
import { errorText } from '../../core/errors.js'
import { parsedOrUsage } from './parsed-or-usage.js'

/** Where the files go in a development checkout (on the device: --dir /var/lib/nocturn/tls). */
const DEV_TLS_DIR = 'var/tls'

export const USAGE = `usage:
  nocturn tls [--dir DIR] [--host NAME] [--name DNS]... [--ip ADDR]... [--no-ips]

Makes a household CA (once) and a certificate for this device's LAN names, signed by it, so the
phone app can be served over HTTPS (docs/phone-app.md, "HTTPS with a household CA"). Run again to
renew the device's certificate: the CA is kept, so phones that trust it go on trusting.
The folder comes from --dir or NOCTURN_TLS_DIR (default ${DEV_TLS_DIR}); the names are the host
name (--host, default this machine's), <host>.local, any --name, and this machine's private
addresses (or only the --ip ones given; --no-ips for none).
`

interface Io {
  readonly out: NodeJS.WritableStream
  readonly err: NodeJS.WritableStream
  readonly env: NodeJS.ProcessEnv
}

export function run(args: string[]): Promise<number> {
  return tls(args, { out: process.stdout, err: process.stderr, env: process.env })
}

export async function tls(args: string[], io: Io): Promise<number> {
  const values = parsedOrUsage('tls', () => parse(args).values, { err: io.err, usage: USAGE })
  if (!values) return 2
  const host = (values.host ?? hostname()).replace(/\.local$/, '')
  if (!/^[A-Za-z0-9-]{1,63}$/.test(host)) {
    io.err.write('nocturn tls: --host must be a host name without dots, e.g. kitchen\n')
    return 2
  }
  const extra = values.name ?? []
  const bad = extra.find((n) => !/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/.test(n))
  if (bad !== undefined) {
    io.err.write(`nocturn tls: --name "${bad}" is not a DNS name\n`)
    return 2
  }
  const ips = values['no-ips'] ? [] : (values.ip ?? localAddresses())
  const dir = resolve(values.dir ?? io.env.NOCTURN_TLS_DIR ?? DEV_TLS_DIR)
  let r: ReturnType<typeof makeHouseholdTls>
  try {
    r = makeHouseholdTls({ dir, host, dnsNames: [`${host}.local`, host, ...extra], ips })
  } catch (err) {
    io.err.write(`nocturn tls: ${errorText(err)}\n`)
    return 1
  }
  io.out.write(
    `${r.newCa ? 'Made a new household CA' : 'Kept the household CA'}: ${r.caCert}\n` +
      `Renewed the device's certificate for ${[...r.dnsNames, ...r.ips].join(', ')}, valid until ${r.notAfter}:\n` +
      `  ${r.cert}\n  ${r.key} (private, mode 0600)\n`,
  )
  if (r.skipped.length > 0) {
    io.out.write(`Left out (not a private address): ${r.skipped.join(', ')}\n`)
  }
  io.out.write(
    '\nFirst let the phones fetch the CA from the app (http://<this device>:8080/household-ca.crt),\n' +
      'still on plain HTTP — in the config:\n' +
      `  "phoneApp": { "caCertFile": "${r.caCert}" }\n` +
      'Once the phones trust it, serve the app over HTTPS:\n' +
      `  "phoneApp": { "caCertFile": "${r.caCert}", "tlsCertFile": "${r.cert}", "tlsKeyFile": "${r.key}" }\n` +
      `\nInstall ${r.caCert} on each phone once (never ca.key — it stays on this device):\n` +
      '  Android: Settings → Security → Encryption & credentials → Install a certificate → CA certificate.\n' +
      '  iPhone: open the file (AirDrop or mail), install the profile in Settings → General → VPN & Device\n' +
      '          Management, then turn it on in Settings → General → About → Certificate Trust Settings.\n' +
      'Step by step: docs/phone-app.md, "HTTPS with a household CA".\n',
  )
  return 0
}

/** This machine's addresses on the LAN (loopback left out; a link-local zone dropped). */
function localAddresses(): string[] {
  const out: string[] = []
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (!a.internal) out.push(a.address.replace(/%.*$/, ''))
  }
  return out
}

function parse(args: string[]) {
  return parseArgs({
    args,
    options: {
      dir: { type: 'string' },
      host: { type: 'string' },
      name: { type: 'string', multiple: true },
      ip: { type: 'string', multiple: true },
      'no-ips': { type: 'boolean' },
    },
  })
}
