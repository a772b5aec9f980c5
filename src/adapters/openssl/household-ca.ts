import { spawnSync } from 'node:child_process'
import { randomBytes, X509Certificate } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { isIPv4, isIPv6 } from 'node:net'
import { join } from 'node:path'

/** The household CA lives ten years; the device's certificate 397 days, under Apple's 398-day cap. */
const CA_DAYS = 3650
const LEAF_DAYS = 397

/**
 * The names the CA may ever sign for (RFC 5280 name constraints): `.local` names, the device's bare
 * host name, and private and loopback addresses. A phone that trusts the CA trusts it for these
 * alone, so a stolen CA key cannot pass for the household's bank.
 */
const PERMITTED_IPS = [
  '10.0.0.0/255.0.0.0',
  '172.16.0.0/255.240.0.0',
  '192.168.0.0/255.255.0.0',
  '169.254.0.0/255.255.0.0',
  '127.0.0.0/255.0.0.0',
  // Unique local (fc00::/7), link-local (fe80::/10) and loopback IPv6.
  'fc00::/fe00::',
  'fe80::/ffc0::',
  '::1/ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
]

interface HouseholdTlsFiles {
  readonly dir: string
  readonly caCert: string
  readonly caKey: string
  readonly cert: string
  readonly key: string
}

export interface HouseholdTlsResult extends HouseholdTlsFiles {
  /** false: the CA that phones already trust was kept. */
  readonly newCa: boolean
  readonly dnsNames: readonly string[]
  readonly ips: readonly string[]
  /** Addresses left out: outside the private ranges the CA may sign for. */
  readonly skipped: readonly string[]
  readonly notAfter: string
}

function householdTlsFiles(dir: string): HouseholdTlsFiles {
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    cert: join(dir, 'device.crt'),
    key: join(dir, 'device.key'),
  }
}

/**
 * Makes the household CA once and, at every run, a fresh certificate for the device's LAN names,
 * with the `openssl` command line (Debian's openssl package). Private keys are written 0600 from
 * their first byte (they come through a pipe, never argv); the folder is 0700. A CA already there
 * is kept: phones that installed it keep trusting the renewed certificate.
 */
export function makeHouseholdTls(o: {
  dir: string
  host: string
  dnsNames: readonly string[]
  ips: readonly string[]
}): HouseholdTlsResult {
  const f = householdTlsFiles(o.dir)
  mkdirSync(o.dir, { recursive: true, mode: 0o700 })
  chmodSync(o.dir, 0o700)
  const ips = o.ips.filter((ip) => permitted(ip))
  const skipped = o.ips.filter((ip) => !permitted(ip))
  const dnsNames = [...new Set(o.dnsNames)]
  const work = mkdtempSync(join(o.dir, '.work-'))
  try {
    const newCa = !(existsSync(f.caCert) && existsSync(f.caKey))
    if (newCa) makeCa(f, o.host, work)
    const leafKey = join(work, 'device.key')
    writeSecret(
      leafKey,
      openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']),
    )
    const ext = join(work, 'leaf.ext')
    const san = [...dnsNames.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',')
    writeFileSync(
      ext,
      [
        'basicConstraints = critical, CA:FALSE',
        'keyUsage = critical, digitalSignature',
        'extendedKeyUsage = serverAuth',
        `subjectAltName = ${san}`,
        'subjectKeyIdentifier = hash',
        'authorityKeyIdentifier = keyid',
        '',
      ].join('\n'),
    )
    const csr = openssl(['req', '-new', '-key', leafKey, '-subj', `/CN=${dnsNames[0] ?? o.host}`])
    const leafCert = join(work, 'device.crt')
    openssl(
      [
        'x509',
        '-req',
        '-CA',
        f.caCert,
        '-CAkey',
        f.caKey,
        '-set_serial',
        `0x${randomBytes(16).toString('hex')}`,
        '-days',
        String(LEAF_DAYS),
        '-sha256',
        '-extfile',
        ext,
        '-out',
        leafCert,
      ],
      csr,
    )
    // The key first, then the certificate: a server restarted in between finds a pair that
    // does not match and says so, rather than an old key under a new name.
    renameSync(leafKey, f.key)
    renameSync(leafCert, f.cert)
    const cert = new X509Certificate(readFileSync(f.cert))
    return { ...f, newCa, dnsNames, ips, skipped, notAfter: cert.validTo }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

function makeCa(f: HouseholdTlsFiles, host: string, work: string): void {
  const key = join(work, 'ca.key')
  writeSecret(key, openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']))
  const permittedNames = ['DNS:local', `DNS:${host}`, ...PERMITTED_IPS.map((r) => `IP:${r}`)]
  const cert = join(work, 'ca.crt')
  openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    key,
    '-sha256',
    '-days',
    String(CA_DAYS),
    '-subj',
    `/CN=Nocturn household CA (${host})`,
    '-addext',
    'basicConstraints = critical, CA:TRUE, pathlen:0',
    '-addext',
    'keyUsage = critical, keyCertSign, cRLSign',
    '-addext',
    `nameConstraints = critical, ${permittedNames.map((n) => `permitted;${n}`).join(', ')}`,
    '-out',
    cert,
  ])
  renameSync(key, f.caKey)
  renameSync(cert, f.caCert)
}

/** Runs openssl with `input` on stdin; its stdout, or an error with its last stderr line. */
function openssl(args: string[], input?: Buffer): Buffer {
  const r = spawnSync('openssl', args, { input, maxBuffer: 1 << 20 })
  if (r.error) {
    const missing = (r.error as NodeJS.ErrnoException).code === 'ENOENT'
    throw new Error(
      missing
        ? 'openssl is not installed: apt-get install openssl'
        : `openssl ${args[0]}: ${r.error.message}`,
    )
  }
  if (r.status !== 0) {
    const last = r.stderr.toString('utf8').trim().split('\n').at(-1) ?? ''
    throw new Error(`openssl ${args[0]} failed: ${last}`)
  }
  return r.stdout
}

/** A private key: mode 0600 from its first byte. */
function writeSecret(path: string, bytes: Buffer): void {
  const fd = openSync(path, 'wx', 0o600)
  try {
    writeSync(fd, bytes)
  } finally {
    closeSync(fd)
  }
}

/** Whether an address lies in the ranges the CA may sign for. */
function permitted(ip: string): boolean {
  if (isIPv4(ip)) {
    const [a = 0, b = 0] = ip.split('.').map(Number)
    return (
      a === 10 ||
      a === 127 ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168) ||
      (a === 169 && b === 254)
    )
  }
  if (isIPv6(ip)) {
    const head = ip.toLowerCase()
    return head === '::1' || /^f[cd]/.test(head) || /^fe[89ab]/.test(head)
  }
  return false
}
